// What every case starts: workflows of sequential steps against the bench's remote, under one retry policy
// and one set of timeouts for both engines, with ids unique to the run; and how a case waits for one to end.
import { sleep } from "../../scripts/lib/async.ts";
import type { FakeRemote } from "../../scripts/lib/fake-remote.ts";
import type { Engine, RetryPolicy, StepTimeouts, WorkflowSpec, WorkflowStatus } from "./engines/engine.ts";
import { now } from "./remote.ts";
import { newStartTally, startWithBackPressure } from "./starts.ts";

export const STEPS_PER_WORKFLOW = 5;
/** Shepherd's defaults, spelled out so both engines get the same policy (Workflows via toWorkflowsRetry). */
export const DEFAULT_RETRY: RetryPolicy = { maxAttempts: 3, initialIntervalMs: 1000, backoffCoefficient: 2, jitter: 0.2 };
export const DEFAULT_TIMEOUTS: StepTimeouts = { startToCloseMs: 300_000, heartbeatMs: 30_000 };
/** The retry case's policy: one retry, as soon as possible. 0 is the smallest interval both engines accept. */
export const IMMEDIATE_RETRY: RetryPolicy = { maxAttempts: 2, initialIntervalMs: 0, backoffCoefficient: 2, jitter: 0 };
/** The same fixed interval for every status poll of both engines. */
const POLL_INTERVAL_MS = 10;

/** What every case of a run shares: the remote, and the tag that makes the run's ids unique. */
export interface BenchContext {
  remote: FakeRemote;
  runTag: string;
}

/** Workflow ids use only [a-z0-9-], which both engines accept. */
export const idFor = (ctx: BenchContext, tag: string, index: number): string => `${ctx.runTag}-${tag}-${index}`;

/** `count` steps s1, s2, … calling the remote at pathFor(index) (default /ok). */
export function stepsFor(remoteUrl: string, count: number, pathFor: (index: number) => string = () => "/ok"): WorkflowSpec["steps"] {
  return Array.from({ length: count }, (_, index) => ({ id: `s${index + 1}`, url: `${remoteUrl}${pathFor(index)}` }));
}

/** How long one start of a case may be pushed back (429/503 with Retry-After) before the case ends. */
const START_BOUND_MS = 60_000;

/** Starts one workflow as a well-behaved client (a 429/503 sent again after its Retry-After); one it cannot start ends the case. */
export async function startOrThrow(engine: Engine, spec: WorkflowSpec): Promise<void> {
  const tally = newStartTally();
  if (!(await startWithBackPressure(engine, spec, tally, Date.now() + START_BOUND_MS))) throw new Error(`${engine.label}: start failed: ${tally.firstError}`);
}

/** Polls one workflow every POLL_INTERVAL_MS until it ends; returns { status, observedAt }. */
export async function pollUntilTerminal(engine: Engine, id: string, timeoutMs: number): Promise<{ status: WorkflowStatus; observedAt: number }> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const status = await engine.readStatus(id);
    if (status.terminal) return { status, observedAt: now() };
    if (Date.now() > deadline) throw new Error(`${engine.label}: workflow ${id} not finished after ${timeoutMs} ms (state ${status.state})`);
    await sleep(POLL_INTERVAL_MS);
  }
}
