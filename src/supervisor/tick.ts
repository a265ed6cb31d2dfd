import { startHandOff } from "../config";
import { withTickFaults } from "../dev/fault-bindings";
import { queueChecksDue, scheduledStartDue } from "../domain/machine";
import { transition } from "../domain/machine";
import type { WorkflowState } from "../domain/machine/state";
import { currentQueueLag } from "../admission/queue-lag-monitor";
import { backPressureNow } from "../admission/back-pressure-now";
import type { CommitOptions } from "../workflow/rpc";
import type { Transitions } from "../workflow/transitions";

/**
 * The supervisor's tick: acts on what is due (deadlines, retries, compensation, escalation; the decisions are the
 * machine's, see domain/machine/deadlines.ts), so a repeated or early tick is harmless. Undefined when there is
 * no workflow.
 */
export async function supervise(transitions: Transitions, env: Env, options: CommitOptions = {}): Promise<WorkflowState["status"] | undefined> {
  const before = transitions.state();
  if (!before) return undefined;
  // Whether a queued attempt's message was lost depends on how far behind the queue is: asked only then.
  const queueLag = queueChecksDue(before, Date.now()) ? await currentQueueLag(env, Date.now()) : undefined;
  // A scheduled start that falls due is admitted again, as a start asked for now would be (scheduled-start.ts).
  const startAdmission = scheduledStartDue(before, Date.now()) ? (await backPressureNow(env, { tenant: before.tenant, name: before.name })).verdict : undefined;
  // Loaded again: other calls may have changed the state while the lag was read.
  const loaded = transitions.state() ?? before;
  const now = Date.now();
  const event = { type: "DeadlinesReached" as const, ...(queueLag ? { queueLag } : {}), ...(startAdmission ? { startAdmission } : {}) };
  const result = transition(loaded, event, now, Math.random, transitions.store.items);
  await transitions.commit(loaded, result, now, options);
  return result.state.status;
}

/** The tick as the alarm runs it: with DEV_HOOKS, the `alarmThrows` fault can crash it. */
const alarmTick = withTickFaults(supervise);

/** The object's alarm: a guard against a crashed tick, then the tick; a failed tick sets the alarm again. */
export async function runAlarm(transitions: Transitions, env: Env, info?: AlarmInvocationInfo): Promise<void> {
  // The alarm that woke us is spent: the next commit must set one again.
  transitions.alarm.forget();
  try {
    // Only a workflow has a tick to guard: an object without one is left with no alarm.
    if (transitions.state()) await transitions.alarm.guard();
    // A quiet tenant's retries skip the queue too, so they do not wait behind another tenant's backlog; a busy
    // one's go through it, where they count towards back-pressure (see HandOff).
    await alarmTick(transitions, env, { byAlarm: true, ...(startHandOff(env) ? { handOff: "fair-share" } : {}) });
  } catch (error) {
    await transitions.alarm.rearmAfterFailure(error, info);
  }
}
