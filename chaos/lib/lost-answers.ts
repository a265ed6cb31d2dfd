// Lost answers and `verify` (contract v1.1, "Supervision beyond deadlines": verify before retry). A few
// workflows whose one step calls the remote's `POST /lost/{step}`: the first request of a key applies the
// effect and then loses the answer, by resetting the connection or by hanging past startToCloseMs (dealt in
// turn from a start the seed picks, and named in the request's body for the remote). The step's `verify` is `GET /effects/<key>`, which the remote answers 200 with the
// effect's body once the effect exists and 404 before. So the engine must ask before the next attempt, find the
// effect, succeed with it (`step_verified`) and never send the action again: the remote counts the requests.
import { dealt, seededRandom } from "./faults.ts";
import { familyId, familyWorkflow, remotePost, SOAK_STEP_DEFAULTS } from "./definitions.ts";
import type { SoakWorkflow } from "./definitions.ts";

export const LOST_KIND = "lost-answer";
export const LOST_STEP = "charge";
export const LOST_MODES = ["reset", "hang"] as const;
export type LostMode = (typeof LOST_MODES)[number];
export const isLostMode = (value: unknown): value is LostMode => value === "reset" || value === "hang";
/** A hang outlives the attempt by this much: its deadline, not the remote, ends it. */
const START_TO_CLOSE_MS = 2_000;

/** How the remote loses the first answer of a step whose request names none. */
export const DEFAULT_LOST_MODE: LostMode = "hang";

/**
 * `count` one-step workflows `chaos-<seed>-lost-answer-NNNN` whose answer is lost once and found by `verify`.
 * The modes are dealt in turn, so any two workflows have both.
 */
export function buildLostAnswerWorkflows({ seed, count, remoteUrl }: { seed: string; count: number; remoteUrl: string }): SoakWorkflow[] {
  const first = Math.floor(seededRandom(seed, LOST_KIND)() * LOST_MODES.length);
  return Array.from({ length: count }, (_, i) => {
    const id = familyId(seed, LOST_KIND, i);
    const step = {
      id: LOST_STEP,
      action: remotePost(`${remoteUrl}/lost/${LOST_STEP}`, LOST_STEP, { amount: 10 + i, lose: dealt(LOST_MODES, first + i) }),
      // The key in the path is the Idempotency-Key the verify call carries too: the remote checks both agree.
      verify: { type: "http" as const, url: `${remoteUrl}/effects/{{ workflow.id }}:${LOST_STEP}` },
      compensate: remotePost(`${remoteUrl}/compensate/${LOST_STEP}`, LOST_STEP),
      timeouts: { startToCloseMs: START_TO_CLOSE_MS },
    };
    return familyWorkflow(LOST_KIND, { id, input: { n: i + 1 }, definition: { name: `chaos-${LOST_KIND}`, onFailure: "compensate", defaults: SOAK_STEP_DEFAULTS, steps: [step] } });
  });
}
