// Starting a workflow as a well-behaved client does: a 429/503 with Retry-After, or no answer at all, is sent
// again (same id and body, so a replay) after the delay, within a bound. Every case that starts many
// workflows at once uses it, since an engine under load is entitled to push back.
import { sleep } from "../../scripts/lib/async.ts";
import { errorMessage } from "../../scripts/lib/json.ts";
import type { Engine, StartResult } from "./engines/engine.ts";

/** What starts a workflow from a spec and reads it back: an engine, or the pool case's worker workflows. */
export type Starter<S extends { id: string }> = { startWorkflow(spec: S): Promise<StartResult> } & Pick<Engine, "readStatus">;

/** One start is tried again for at most this long after its first try, then counted as a start failure. */
export const START_RETRY_BUDGET_MS = 10 * 60_000;
const BACK_PRESSURE = new Set([429, 503]);
/** A start that got no answer (timeout, reset) is sent again after this: the same id and body replay. */
const NO_ANSWER_RETRY_MS = 1_000;
/** A floor under Retry-After, so "0" cannot turn 32 clients into a busy loop against an overloaded engine. */
const MIN_RETRY_WAIT_MS = 100;

/** What the clients of one run went through. */
export interface StartTally {
  backPressureAnswers: number;
  retryAfterWaitMs: number;
  noAnswers: number;
  firstError: string | undefined;
}

export function newStartTally(): StartTally {
  return { backPressureAnswers: 0, retryAfterWaitMs: 0, noAnswers: 0, firstError: undefined };
}

/**
 * One client's start of one workflow: sent again (same id and body, so a replay) after a 429/503's
 * Retry-After or after no answer at all, until it is accepted or its retry budget or the start phase runs
 * out. Resolves true when the engine has the workflow.
 */
export async function startWithBackPressure<S extends { id: string }>(engine: Starter<S>, spec: S, tally: StartTally, startsClosedAt: number): Promise<boolean> {
  const firstTryAt = Date.now();
  if (firstTryAt >= startsClosedAt) return failStart(tally, "not sent: the start phase's bound had passed");
  const giveUpAt = Math.min(firstTryAt + START_RETRY_BUDGET_MS, startsClosedAt);
  for (let tries = 1; ; tries++) {
    const result = await engine.startWorkflow(spec).catch((error: unknown): StartResult => ({ ok: false, status: "no answer", error: errorMessage(error) }));
    if (result.ok || (tries > 1 && result.existing)) return true;
    let waitMs: number;
    if (typeof result.status === "number" && BACK_PRESSURE.has(result.status) && result.retryAfterS !== undefined) {
      tally.backPressureAnswers++;
      waitMs = Math.max(MIN_RETRY_WAIT_MS, result.retryAfterS * 1000);
    } else if (result.status === "no answer") {
      tally.noAnswers++;
      waitMs = NO_ANSWER_RETRY_MS;
    } else {
      // A refusal after an unanswered try may only mean the first try got through (the baseline answers 409
      // for a known id): whether the engine has the workflow decides.
      if (tries > 1 && (await engineKnows(engine, spec.id))) return true;
      return failStart(tally, `${result.status} ${result.error}`);
    }
    if (Date.now() + waitMs > giveUpAt) return failStart(tally, `gave up after ${tries} tries, last ${result.status} ${result.error}`);
    if (result.status !== "no answer") tally.retryAfterWaitMs += waitMs;
    await sleep(waitMs);
  }
}

function failStart(tally: StartTally, error: string): false {
  tally.firstError ??= error;
  return false;
}

async function engineKnows(engine: Pick<Engine, "readStatus">, id: string): Promise<boolean> {
  const status = await engine.readStatus(id).catch(() => undefined);
  return status !== undefined && status.state !== "http_404";
}
