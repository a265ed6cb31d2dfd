import { createExecutionContext } from "cloudflare:test";
import { expect, vi } from "vitest";
import { createApp } from "../../src/api/app";
import { bearer, type TestTenant } from "./api";

/** What a request to the app answered: its status, Retry-After and JSON body. */
export interface SentAnswer {
  status: number;
  retryAfter: string | null;
  body: any;
}

/**
 * The Worker's app under an environment of the test's own (a tight limit, a small cap), called directly: `send`
 * as `tenant`, and `settle` to let started workflows complete while the test's fake remote is still there.
 */
export function appWithEnv(testEnv: Env) {
  const app = createApp();
  const send = async (method: string, path: string, tenant: TestTenant, body?: unknown): Promise<SentAnswer> => {
    const response = await app.fetch(
      new Request(`http://shepherd.test${path}`, {
        method,
        headers: { ...bearer(tenant), ...(body === undefined ? {} : { "Content-Type": "application/json" }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      }),
      testEnv,
      createExecutionContext(),
    );
    return { status: response.status, retryAfter: response.headers.get("Retry-After"), body: (await response.json()) as any };
  };
  const settle = async (tenant: TestTenant, ids: string[]): Promise<void> => {
    for (const id of ids) await vi.waitFor(async () => expect((await send("GET", `/v1/workflows/${id}`, tenant)).body.status).toBe("completed"));
  };
  return { send, settle };
}
