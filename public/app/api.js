// Every call the dashboard makes to /v1: the session's token as a bearer token, JSON both ways, and the
// API's error body turned into an Error that says what the API said.
import { currentToken, signOut } from "./session.js";

export class ApiError extends Error {
  constructor(status, body) {
    const error = body?.error ?? {};
    super(error.message ?? `The API answered ${status}.`);
    this.status = status;
    this.code = error.code ?? "http_" + status;
    this.details = error.details;
  }
}

/** Listeners told when the API refuses the token, so the page can ask for another. */
const unauthorizedListeners = new Set();
export function onUnauthorized(listener) {
  unauthorizedListeners.add(listener);
  return () => unauthorizedListeners.delete(listener);
}

export async function api(path, { method = "GET", body, token = currentToken() } = {}) {
  const headers = { Accept: "application/json", Authorization: `Bearer ${token ?? ""}` };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const response = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await response.text();
  const parsed = text ? safeJson(text) : undefined;
  if (response.status === 401) {
    signOut();
    for (const listener of unauthorizedListeners) listener();
  }
  if (!response.ok) throw new ApiError(response.status, parsed);
  return parsed;
}

/** A query string from the defined values only. */
export function query(params) {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) if (value !== undefined && value !== null && value !== "") search.set(key, String(value));
  const text = search.toString();
  return text ? `?${text}` : "";
}

function safeJson(text) {
  try {
    return JSON.parse(text);
  } catch {
    return { error: { message: text.slice(0, 200) } };
  }
}
