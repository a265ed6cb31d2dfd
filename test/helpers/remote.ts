import { vi } from "vitest";

export interface RemoteCall {
  url: string;
  method: string;
  headers: Record<string, string>;
  body: any;
  signal?: AbortSignal | null;
}

export type RemoteHandler = (call: RemoteCall, callsForKey: number) => Response | Promise<Response>;

/**
 * A fake remote service behind `fetch`, reached by the agents inside the Workers runtime. It records every
 * request; `effects` counts the requests it answered 2xx per Idempotency-Key, as a real idempotent service
 * would apply them (once per key).
 */
export function mockRemote(handler: RemoteHandler) {
  const calls: RemoteCall[] = [];
  const perKey = new Map<string, number>();
  const applied = new Map<string, number>();
  const spy = vi.spyOn(globalThis, "fetch").mockImplementation(async (input: RequestInfo | URL, init?: RequestInit) => {
    const request = new Request(input, init);
    const text = await request.text();
    const call: RemoteCall = {
      url: request.url,
      method: request.method,
      headers: Object.fromEntries(request.headers),
      body: text ? JSON.parse(text) : undefined,
      signal: init?.signal ?? null,
    };
    calls.push(call);
    const key = call.headers["idempotency-key"] ?? "";
    const n = (perKey.get(key) ?? 0) + 1;
    perKey.set(key, n);
    const response = await handler(call, n);
    if (response.ok) applied.set(key, (applied.get(key) ?? 0) + 1);
    return response;
  });
  return {
    spy,
    calls,
    /** How many requests were sent for one idempotency key. */
    requestsFor: (key: string) => perKey.get(key) ?? 0,
    /** How many requests for one idempotency key the remote answered with 2xx. */
    successesFor: (key: string) => applied.get(key) ?? 0,
    callsTo: (path: string) => calls.filter((call) => new URL(call.url).pathname === path),
  };
}

export function json(body: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { "Content-Type": "application/json", ...headers } });
}

/** A request that never answers until the caller aborts it, like a hung remote. */
export function hang(call: RemoteCall): Promise<Response> {
  return new Promise((_, reject) => {
    call.signal?.addEventListener("abort", () => reject(call.signal?.reason ?? new Error("aborted")));
  });
}

export const REMOTE = "https://remote.example";

/** A step definition calling the fake remote at `/<id>`. */
export function httpStep(id: string, extra: Record<string, unknown> = {}) {
  return { id, action: { type: "http", url: `${REMOTE}/${id}`, body: { step: id } }, ...extra };
}
