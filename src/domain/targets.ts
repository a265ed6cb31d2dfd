import { hostMatches } from "./allowed-targets";

/**
 * Which URLs an `http` action may call. A workflow definition is user input, so without this an agent
 * could be pointed at the deployment's own network (SSRF). Private targets are allowed only where the
 * deployment says so (local development, tests).
 */
export interface TargetPolicy {
  allowPrivate: boolean;
  /** The tenant's `ALLOWED_TARGETS` host patterns; undefined when the tenant is not limited. */
  allowedHosts?: readonly string[] | undefined;
}

const PRIVATE_SUFFIXES = [".localhost", ".internal", ".local", ".lan", ".home.arpa"];

/** Why the URL may not be called, or undefined when it may. */
export function checkTarget(rawUrl: string, policy: TargetPolicy): string | undefined {
  let url: URL;
  try {
    url = new URL(rawUrl);
  } catch {
    return `"${rawUrl}" is not an absolute URL`;
  }
  if (url.protocol !== "https:" && !(policy.allowPrivate && url.protocol === "http:")) {
    return `only https URLs may be called (got ${url.protocol})`;
  }
  if (url.username || url.password) return "URLs with credentials (userinfo) are refused";
  if (policy.allowedHosts && !hostMatches(url.hostname, policy.allowedHosts)) {
    return `host ${url.hostname} is not in this tenant's ALLOWED_TARGETS`;
  }
  if (policy.allowPrivate) return undefined;
  // "localhost." and "metadata.internal." are the same hosts written fully qualified.
  const host = url.hostname.toLowerCase().replace(/\.+$/, "");
  if (host.startsWith("[") || /^[\d.]+$/.test(host) || /^0x/i.test(host)) {
    return `IP literal hosts are refused (${host})`;
  }
  if (host === "localhost" || PRIVATE_SUFFIXES.some((suffix) => host.endsWith(suffix)) || !host.includes(".")) {
    return `private host names are refused (${host})`;
  }
  return undefined;
}
