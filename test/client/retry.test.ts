import { describe, expect, it } from "vitest";
import { ShepherdApiError } from "../../src/client";
import { DEFAULT_RETRY_POLICY, retryAfterMs, retryDelayMs } from "../../src/client/retry";
import { uniqueId } from "../helpers/api";
import { DAY, waitStep } from "../helpers/workflow-language";
import { clientFor, workerFetch } from "./client";

const NOW = Date.UTC(2026, 0, 1);
const context = { status: 503, retryAfter: null, attempt: 1, now: NOW, random: 0.5 };

describe("when to try again (retry.ts)", () => {
  it.each([
    ["429 with Retry-After seconds", { status: 429, retryAfter: "2" }, 2_000],
    ["503 with an HTTP date", { retryAfter: new Date(NOW + 3_000).toUTCString() }, 3_000],
    ["503 asking for more than the cap", { retryAfter: "3600" }, 30_000],
    ["503 with no header: jittered backoff, first step", {}, 250],
    ["503 with no header: the step doubles", { attempt: 3 }, 1_000],
    ["503 with an unreadable header: backoff", { retryAfter: "soon" }, 250],
    ["400: never", { status: 400 }, undefined],
    ["409: never", { status: 409, retryAfter: "1" }, undefined],
    ["500: never", { status: 500 }, undefined],
    ["503 on the last try: never", { attempt: DEFAULT_RETRY_POLICY.maxAttempts, retryAfter: "1" }, undefined],
  ])("%s", (_name, overrides, expected) => {
    expect(retryDelayMs(DEFAULT_RETRY_POLICY, { ...context, ...overrides })).toBe(expected);
  });

  it("reads a date already past as no wait", () => {
    expect(retryAfterMs(new Date(NOW - 5_000).toUTCString(), NOW)).toBe(0);
  });
});

/** A fetch that answers `status` + Retry-After for the first `times` requests, then passes through to the Worker. */
function busyFor(times: number, status: number, retryAfter?: string) {
  const seen: string[] = [];
  const fetch = async (input: RequestInfo | URL, init?: RequestInit) => {
    const request = new Request(input, init);
    seen.push(`${request.method} ${new URL(request.url).pathname}`);
    if (seen.length <= times) {
      const headers: Record<string, string> = { "Content-Type": "application/json", ...(retryAfter ? { "Retry-After": retryAfter } : {}) };
      return new Response(JSON.stringify({ error: { code: "overloaded", message: "busy" } }), { status, headers });
    }
    return workerFetch(request);
  };
  return { fetch, seen };
}

function recordedSleeps() {
  const waits: number[] = [];
  return { waits, sleep: async (ms: number) => void waits.push(ms) };
}

describe("the client's retries", () => {
  it("sends a start again after a 503 with Retry-After: 1, waiting the second it asked for", async () => {
    const { fetch, seen } = busyFor(1, 503, "1");
    const { waits, sleep } = recordedSleeps();
    const id = uniqueId("retry");
    const workflow = await clientFor({ fetch, runtime: { sleep } }).start({ id, definition: { name: "retried", steps: [waitStep("hold", { event: "go", timeoutMs: DAY })] } });
    expect(workflow.id).toBe(id);
    expect(waits).toEqual([1_000]);
    // The body went out again whole: the second request created the workflow.
    expect(seen).toEqual(["POST /v1/workflows", "POST /v1/workflows"]);
  });

  it("backs off with jitter after a 429 without Retry-After", async () => {
    const { fetch } = busyFor(2, 429);
    const { waits, sleep } = recordedSleeps();
    const id = uniqueId("retry");
    await clientFor({ fetch, runtime: { sleep, random: () => 0.5 } }).start({ id, definition: { name: "retried", steps: [waitStep("hold", { event: "go", timeoutMs: DAY })] } });
    expect(waits).toEqual([250, 500]);
  });

  it("gives up after its tries and throws the last answer as a ShepherdApiError", async () => {
    const { fetch, seen } = busyFor(10, 503, "1");
    const { waits, sleep } = recordedSleeps();
    const error = await clientFor({ fetch, runtime: { sleep }, retry: { maxAttempts: 3 } })
      .get("any")
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ShepherdApiError);
    expect(error).toMatchObject({ status: 503, code: "overloaded" });
    expect(seen).toHaveLength(3);
    expect(waits).toEqual([1_000, 1_000]);
  });

  it("never retries another status", async () => {
    const { fetch, seen } = busyFor(1, 500, "1");
    const { waits, sleep } = recordedSleeps();
    await expect(clientFor({ fetch, runtime: { sleep } }).get("any")).rejects.toMatchObject({ status: 500 });
    expect(seen).toHaveLength(1);
    expect(waits).toEqual([]);
  });
});
