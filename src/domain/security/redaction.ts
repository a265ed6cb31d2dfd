/**
 * What of a request may be kept for an operator to read. An attempt's headers are stored and shown (the attempt's
 * exchange), and a definition puts credentials in them (`Authorization: Bearer …`, an API key); the task token is a
 * capability for the attempt. Their values are replaced, their names kept, so a reader still sees what was sent.
 * The definition language has no secret store, so a header is judged by its name.
 */

export const REDACTED = "[redacted]";

/** Header (and query parameter) names whose values are credentials: exact names, then words within a name. */
const SECRET_NAMES = new Set(["authorization", "proxy-authorization", "cookie", "set-cookie", "shepherd-task-token"]);
const SECRET_WORDS = /(auth|token|secret|password|passwd|api[-_]?key|credential|signature|session)/i;

/** Longest header value kept: a long value is cut, as a body is; and at most this many headers. */
const MAX_HEADER_VALUE = 512;
const MAX_HEADERS = 32;

export function isSecretName(name: string): boolean {
  return SECRET_NAMES.has(name.toLowerCase()) || SECRET_WORDS.test(name);
}

/** Headers by lower-case name, credentials redacted and long values cut. */
export function redactedHeaders(headers: Iterable<[string, string]>): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const [name, value] of headers) {
    if (Object.keys(kept).length >= MAX_HEADERS) break;
    const key = name.toLowerCase();
    kept[key] = isSecretName(key) ? REDACTED : value.length > MAX_HEADER_VALUE ? `${value.slice(0, MAX_HEADER_VALUE)}…` : value;
  }
  return kept;
}

/** The URL with its password and the values of query parameters named like credentials (`?api_key=`) redacted. */
export function redactedUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return raw;
  }
  const secret = [...new Set(url.searchParams.keys())].filter(isSecretName);
  if (secret.length === 0 && url.password === "") return raw;
  if (url.password !== "") url.password = REDACTED;
  for (const name of secret) url.searchParams.set(name, REDACTED);
  // The marker reads as itself, not percent-encoded.
  return url.toString().replaceAll(encodeURIComponent(REDACTED), REDACTED);
}
