// The stalling agent (contract v1.1, "Supervision beyond deadlines": `timeouts.progressMs`). A few workflows
// whose one step calls the remote's `POST /stall/{step}`: it answers 202 and reports through the task token.
// The first attempt that reaches it heartbeats every second with the same progress ("stuck at 47 %") and never
// completes, so heartbeats alone would keep it alive until startToCloseMs; only the stall clock can end it.
// Every later attempt heartbeats with rising progress and completes. Which workflows, when they start and
// where each is stuck is the seed's. The check (supervision-checks.ts) wants the stuck attempt timed out
// `stalled` within 5 s of its deadline, the retry completed, and no stall anywhere else.
import { MAIN_REMOTE_BREAKER, unitHash } from "./faults.ts";
import { familyId, familyWorkflow, remotePost, SOAK_RETRY } from "./definitions.ts";
import type { Definition, SoakWorkflow } from "./definitions.ts";

export const STALL_KIND = "stall";
export const STALL_STEP = "crunch";
/** Progress that stays the same this long ends the attempt. */
export const STALL_PROGRESS_MS = 3_000;
/**
 * Far above the remote's heartbeat interval and progressMs: the stuck attempt's heartbeats keep arriving in
 * time, so nothing but the stall can end it early (an agent the Worker's faults kill costs this much).
 */
export const STALL_HEARTBEAT_MS = 10_000;
/** Room for a stuck attempt, its stall and the retry that completes, with a restart in the middle. */
const STALL_START_TO_CLOSE_MS = 30_000;
/** How often the remote's jobs heartbeat, stuck or moving. */
export const REMOTE_BEAT_MS = 1_000;
/** The moving job's progress, one value per beat (at REMOTE_BEAT_MS / 2), then it completes. */
export const MOVING_PERCENTS = [10, 35, 60, 85];
export const MOVING_BEAT_MS = REMOTE_BEAT_MS / 2;

/** Where the remote keeps the first attempt of `key` stuck: the same value on every heartbeat. */
export function stuckProgress(seed: string, key: string): { percent: number; stage: string } {
  return { percent: 20 + Math.floor(unitHash(seed, key, "stuck") * 60), stage: "stuck" };
}

/** `count` one-step workflows `chaos-<seed>-stall-NNNN` against the remote's stalling job. */
export function buildStallWorkflows({ seed, count, remoteUrl }: { seed: string; count: number; remoteUrl: string }): SoakWorkflow[] {
  const step = {
    id: STALL_STEP,
    action: remotePost(`${remoteUrl}/stall/${STALL_STEP}`, STALL_STEP),
    compensate: remotePost(`${remoteUrl}/compensate/${STALL_STEP}`, STALL_STEP),
    timeouts: { progressMs: STALL_PROGRESS_MS, heartbeatMs: STALL_HEARTBEAT_MS, startToCloseMs: STALL_START_TO_CLOSE_MS },
  };
  const definition: Definition = { name: `chaos-${STALL_KIND}`, onFailure: "compensate", defaults: { retry: SOAK_RETRY, breaker: MAIN_REMOTE_BREAKER }, steps: [step] };
  return Array.from({ length: count }, (_, i) => {
    const id = familyId(seed, STALL_KIND, i);
    return familyWorkflow(STALL_KIND, { id, input: { n: i + 1 }, definition });
  });
}
