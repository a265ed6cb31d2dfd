// The tools' side of HTTP: one JSON request with a timeout, and what a Retry-After header asks for.
/* global fetch, AbortSignal */

export interface JsonRequestOptions {
  method?: string;
  /** Sent as JSON (with its Content-Type) when given. */
  body?: unknown;
  headers?: Record<string, string>;
  /** Default 30 s. */
  timeoutMs?: number;
  /** Ends the request early (e.g. a long poll nobody waits for any more); it then throws, as on a timeout. */
  signal?: AbortSignal;
}

export interface JsonResponse {
  status: number;
  /** The answer parsed, undefined when it is not JSON: the caller narrows it. */
  body: unknown;
  text: string;
  headers: Headers;
}

/**
 * One JSON request with a timeout; never throws for an HTTP status, only for a network failure or a
 * timeout. Returns { status, body, text, headers } (body undefined when the answer is not JSON).
 */
export async function requestJson(url: string | URL, { method = "GET", body, headers = {}, timeoutMs = 30_000, signal }: JsonRequestOptions = {}): Promise<JsonResponse> {
  const timeout = AbortSignal.timeout(timeoutMs);
  const response = await fetch(url, {
    method,
    headers: { ...(body === undefined ? {} : { "Content-Type": "application/json" }), ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
  });
  const text = await response.text();
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  return { status: response.status, body: parsed, text, headers: response.headers };
}

/**
 * Milliseconds a Retry-After value asks for (delta-seconds or an HTTP date), or null without a usable one,
 * so a caller can tell "no advice" from "retry at once".
 */
export function retryAfterMs(header: string | null | undefined, now: number = Date.now()): number | null {
  if (header === null || header === undefined || header.trim() === "") return null;
  const seconds = Number(header);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1_000;
  const date = Date.parse(header);
  return Number.isNaN(date) ? null : Math.max(0, date - now);
}

/** The Retry-After of a response's headers in seconds, undefined without a usable one. */
export function retryAfterSeconds(headers: Headers | undefined): number | undefined {
  const ms = retryAfterMs(headers?.get("retry-after"));
  return ms === null ? undefined : ms / 1000;
}
