// Starting a workflow as a well-behaved client does. A 429 or 503 is the engine asking for time: the next
// try waits what Retry-After says, so the harness measures the engine's back-pressure instead of fighting
// it. No answer at all (the restart) backs off exponentially. Shared by the regular workload and the burst,
// so both meet the front door alike, and every wait is bounded by the caller's deadline.
import { sleep } from "../../scripts/lib/async.ts";
import { retryAfterMs } from "../../scripts/lib/http-json.ts";
import { errorCode } from "./api-shapes.ts";
import type { Answer, ShepherdClient } from "./client.ts";
import type { StartPayload } from "./definitions.ts";

export const BACK_PRESSURE_STATUSES: ReadonlySet<number> = new Set([429, 503]);
/** A Retry-After beyond this is still honoured, but only up to here: a bug must not park the harness. */
const RETRY_AFTER_MAX_MS = 30_000;
const BACKOFF_MIN_MS = 250;
const BACKOFF_MAX_MS = 2_000;
/** Thousands of clients told "retry after 1 s" must not all come back in the same millisecond. */
const JITTER = 0.2;
/** Tries per start, on top of the deadline: a front door that answers 503 forever ends the start too. */
const MAX_TRIES = 200;

/** What starting one workflow took: the harness's side of the front door. */
export interface StartAccount {
  startTries: number;
  /** Answers per HTTP status (0: none came). */
  startStatuses: Record<string, number>;
  /** Back-pressure answers per "status code", e.g. "503 overloaded". */
  backPressure?: Record<string, number>;
  /** The waits Retry-After asked for. */
  retryAfterMs?: number[];
  /** The body of a refusal for good. */
  startError?: unknown;
  startedAt?: number;
}

/**
 * Starts one workflow, retrying until it is accepted, refused for good (a 4xx other than 429), out of tries
 * or past `deadline`. Keeps its account on `result`.
 */
export async function startUntilAccepted(client: ShepherdClient, payload: StartPayload, result: StartAccount, { deadline }: { deadline: number }): Promise<boolean> {
  const backPressure = (result.backPressure ??= {});
  const asks = (result.retryAfterMs ??= []);
  let backoff = BACKOFF_MIN_MS;
  while (Date.now() < deadline && result.startTries < MAX_TRIES) {
    result.startTries += 1;
    const res = await client.startWorkflow(payload);
    result.startStatuses[res.status] = (result.startStatuses[res.status] ?? 0) + 1;
    // 200 means the same id and body were already started: a retried start after a lost answer.
    if (res.status === 201 || res.status === 200) {
      result.startedAt = Date.now();
      return true;
    }
    if (res.status >= 400 && res.status < 500 && res.status !== 429) {
      result.startError = res.body;
      return false;
    }
    const asked = askedWait(res, backPressure);
    if (asked !== null) asks.push(asked);
    const wait = asked !== null ? Math.min(Math.max(asked, BACKOFF_MIN_MS), RETRY_AFTER_MAX_MS) * (1 + Math.random() * JITTER) : backoff * (1 + Math.random() * JITTER);
    if (asked === null) backoff = Math.min(BACKOFF_MAX_MS, backoff * 2);
    await sleep(Math.max(0, Math.min(wait, deadline - Date.now())));
  }
  return false;
}

/** A back-pressure answer is counted by its status and code; what its Retry-After asks for (null: nothing). */
function askedWait(res: Answer, backPressure: Record<string, number>): number | null {
  if (!BACK_PRESSURE_STATUSES.has(res.status)) return null;
  const label = `${res.status} ${String(errorCode(res.body) ?? "?")}`;
  backPressure[label] = (backPressure[label] ?? 0) + 1;
  return retryAfterMs(res.retryAfter);
}
