// The soak's pool phase (reliability cases 29 and 30; contract v1.2, "The user's own agents: worker pools"): a few
// workflows of three worker steps each on one pool, done by the soak's own worker processes (chaos/pool-worker.ts),
// one of which is SIGKILLed while it holds a task. Most start with the soak; the rest just before Shepherd's
// restart, so that the kill finds their tasks being offered and handed out while the workers' long polls wait.
import { familyId, familyWorkflow, SOAK_RETRY } from "./definitions.ts";
import type { RetryPolicy, SoakWorkflow, StepDefaults } from "./definitions.ts";

export const POOL_KIND = "pool";
/** The one pool of the phase (the soak's tenant). */
export const POOL_NAME = "chaos-pool";
/** The worker steps of every pool workflow, in order; a task's idempotencyKey is `<workflowId>:<stepId>`. */
export const POOL_STEPS = ["fetch", "resize", "store"] as const;
export const DEFAULT_POOL_WORKFLOWS: Readonly<Record<"soak" | "quick", number>> = { soak: 30, quick: 10 };
/** The share of them held back until just before the restart (none without one). */
export const RESTART_WAVE_SHARE = 0.35;

/**
 * A worker that dies is found by its heartbeat deadline: 3 s, a few of the workers' 1 s beats. A task the restart
 * cut off loses its heartbeats for the outage (2–5 s) and is retried too, hence attempts to spare.
 */
export const POOL_HEARTBEAT_MS = 3_000;
const POOL_START_TO_CLOSE_MS = 20_000;
export const POOL_RETRY: RetryPolicy = { ...SOAK_RETRY, maxAttempts: 8 };
const POOL_DEFAULTS: StepDefaults = { retry: POOL_RETRY, timeouts: { heartbeatMs: POOL_HEARTBEAT_MS, startToCloseMs: POOL_START_TO_CLOSE_MS } };

/** `count` workflows `chaos-<seed>-pool-NNNN`, each of the three worker steps; the task's input names its workflow and step. */
export function buildPoolWorkflows({ seed, count }: { seed: string; count: number }): SoakWorkflow[] {
  return Array.from({ length: count }, (_, i) =>
    familyWorkflow(POOL_KIND, {
      id: familyId(seed, POOL_KIND, i),
      input: { n: i },
      definition: {
        name: `chaos-${POOL_KIND}`,
        defaults: POOL_DEFAULTS,
        steps: POOL_STEPS.map((id) => ({ id, action: { type: "worker", pool: POOL_NAME, input: { workflow: "{{ workflow.id }}", step: id, n: "{{ input.n }}" } } })),
      },
    }),
  );
}

/** The workflows started with the soak, and those held back for the restart's wave (none when there is no restart). */
export function splitForRestart(workflows: readonly SoakWorkflow[], restart: boolean): { lead: SoakWorkflow[]; wave: SoakWorkflow[] } {
  const held = restart ? Math.round(workflows.length * RESTART_WAVE_SHARE) : 0;
  return { lead: workflows.slice(0, workflows.length - held), wave: workflows.slice(workflows.length - held) };
}

/** The Idempotency-Key the contract gives a worker step's task. */
export const poolKey = (workflowId: string, stepId: string): string => `${workflowId}:${stepId}`;

/** A task as the workers' logs name it: one attempt of one step. */
export interface TaskRef {
  workflowId: string;
  stepId: string;
  attempt: number;
}

export const taskName = (t: TaskRef): string => `${t.workflowId}:${t.stepId}#${t.attempt}`;
