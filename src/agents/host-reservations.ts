import type { EnqueueAttempt } from "../domain/machine";
import { agentHostFor } from "./host-shard";

/** How many of a start's first attempts its object hands to agent hosts itself; the rest go through the queue. */
export const HAND_OFF_MAX = 4;

/**
 * Before a start commits, the hosts of its first attempts are asked for room (the room or fair-share rule of
 * AgentHost); those that have it hold a place for a few seconds. The start then claims exactly those attempts in
 * its own transition and hands them over as an effect, with no call back into the object; the rest are sent
 * through the queue. A host that does not answer has no room. Returns the attempts that have a place, as keys.
 */
export async function reserveAgentHosts(env: Env, workflow: { tenant: string; id: string; name: string }, attempts: readonly EnqueueAttempt[]): Promise<Set<string>> {
  // A worker task is its pool's to hand out, not an agent host's.
  const asked = attempts.filter((attempt) => !attempt.offer).slice(0, HAND_OFF_MAX).map(async (attempt) => {
    const onHost = { tenant: workflow.tenant, workflowId: workflow.id, name: workflow.name, stepId: attempt.stepId, attempt: attempt.attempt };
    const reserved = await agentHostFor(env, onHost).reserve(onHost).catch(() => false);
    return reserved ? [reservationKey(attempt)] : [];
  });
  return new Set((await Promise.all(asked)).flat());
}

export function reservationKey(attempt: Pick<EnqueueAttempt, "stepId" | "attempt">): string {
  return `${attempt.stepId}#${attempt.attempt}`;
}
