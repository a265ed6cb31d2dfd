import { DEFAULT_RETRY_POLICY, retryDelayMs, type RetryPolicy } from "./retry";

export type FetchLike = (input: RequestInfo | URL, init?: RequestInit) => Promise<Response>;

/** The clock, randomness and waiting of the retries: parameters, so tests move time instead of sleeping. */
export interface RetryRuntime {
  sleep: (ms: number) => Promise<void>;
  now: () => number;
  random: () => number;
}

export const REAL_RUNTIME: RetryRuntime = {
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
  now: () => Date.now(),
  random: () => Math.random(),
};

/** A fetch that sends a request again on 429 and 503, as `retry.ts` decides; the last answer is returned as is. */
export function retryingFetch(fetch: FetchLike, policy: RetryPolicy = DEFAULT_RETRY_POLICY, runtime: RetryRuntime = REAL_RUNTIME): FetchLike {
  return async (input, init) => {
    // A Request's body can be read once; each try sends its own copy.
    const original = new Request(input, init);
    for (let attempt = 1; ; attempt += 1) {
      const response = await fetch(original.clone());
      const delay = retryDelayMs(policy, {
        status: response.status,
        retryAfter: response.headers.get("Retry-After"),
        attempt,
        now: runtime.now(),
        random: runtime.random(),
      });
      if (delay === undefined) return response;
      await response.body?.cancel();
      await runtime.sleep(delay);
    }
  };
}
