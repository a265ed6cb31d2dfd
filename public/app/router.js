// Pages live in the URL's hash (#/workflows/abc), so the Worker serves one page and reloads keep the view.
import { useEffect, useState } from "preact/hooks";

/** The current route: `{ page, params, search }` from "#/page/param?key=value". */
export function parseHash(hash) {
  const [path, search = ""] = hash.replace(/^#\/?/, "").split("?");
  const [page = "workflows", ...params] = path.split("/").filter(Boolean).map(decodeURIComponent);
  return { page, params, search: new URLSearchParams(search) };
}

export function useRoute() {
  const [route, setRoute] = useState(() => parseHash(location.hash));
  useEffect(() => {
    const onChange = () => setRoute(parseHash(location.hash));
    addEventListener("hashchange", onChange);
    return () => removeEventListener("hashchange", onChange);
  }, []);
  return route;
}

/** A link to a page: href("workflows", id) → "#/workflows/<id>"; `search` adds "?key=value". */
export function href(page, ...rest) {
  const last = rest.at(-1);
  const search = last && typeof last === "object" ? new URLSearchParams(Object.entries(rest.pop()).filter(([, v]) => v !== undefined && v !== "")) : undefined;
  const path = [page, ...rest].map(encodeURIComponent).join("/");
  const text = search?.toString();
  return `#/${path}${text ? `?${text}` : ""}`;
}

export function navigate(to) {
  location.hash = to.replace(/^#/, "");
}
