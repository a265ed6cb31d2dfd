// The invariants of a workflow's state, whatever led to it: what the property tests check after every transition.
import { expect } from "vitest";
import { MAX_INBOX_EVENTS, nextDeadlineAt } from "../../src/domain/machine";
import { queueCheckAt } from "../../src/domain/machine/queued-attempts";
import { diagnose } from "../../src/domain/machine/diagnosis";
import {
  ACTIVE_ATTEMPT_STATUSES,
  isTerminal,
  type Attempt,
  type StepState,
  type StepStatus,
  type WorkflowState,
} from "../../src/domain/machine/state";

const ENDED_STEP: readonly StepStatus[] = ["succeeded", "failed", "skipped", "compensated", "cancelled"];

export const isActive = (attempt: Attempt | undefined): attempt is Attempt =>
  attempt !== undefined && ACTIVE_ATTEMPT_STATUSES.includes(attempt.status);
export const latest = (step: StepState): Attempt | undefined => step.attempts[step.attempts.length - 1];
export const activeOf = (step: StepState): Attempt | undefined => (isActive(latest(step)) ? latest(step) : undefined);
export const stepIn = (state: WorkflowState, id: string): StepState | undefined => state.steps.find((s) => s.id === id);
export const planOf = (state: WorkflowState, id: string) => state.plan.steps.find((s) => s.id === id)!;

/** A failed invariant: cheap enough to check thousands of times per property. */
export function holds(condition: boolean, message: string): asserts condition {
  if (!condition) throw new Error(message);
}

/**
 * Equal as the store keeps them, which is JSON: a fast path, with the slow comparison only to explain a
 * difference (or to forgive a different key order).
 */
export function same(actual: unknown, expected: unknown, message: string): void {
  if (JSON.stringify(actual) !== JSON.stringify(expected)) expect(actual, message).toEqual(expected);
}

export const oneOf = <T>(value: T, allowed: readonly T[], message: string): void =>
  holds(allowed.includes(value), `${message}: ${String(value)} is not one of ${allowed.join(", ")}`);

/**
 * The contract's deadlines of an active attempt: in the queue (only when the step sets one), its whole run, the
 * silence between heartbeats; and, for a queued attempt, the supervisor's check that its message was not lost,
 * which never ends the attempt.
 */
export function attemptDeadlineAt(state: WorkflowState, step: StepState, attempt: Attempt): { at: number; endsAttempt: boolean } {
  const { timeouts } = planOf(state, step.id);
  if (attempt.status === "scheduled") {
    const check = queueCheckAt(attempt);
    const timeout = timeouts.scheduleToStartMs === undefined ? Infinity : attempt.scheduledAt + timeouts.scheduleToStartMs;
    return timeout <= check ? { at: timeout, endsAttempt: true } : { at: check, endsAttempt: false };
  }
  const startedAt = attempt.startedAt ?? attempt.scheduledAt;
  const stall = timeouts.progressMs === undefined || attempt.progressAt === undefined ? Infinity : attempt.progressAt + timeouts.progressMs;
  return { at: Math.min(startedAt + timeouts.startToCloseMs, (attempt.lastHeartbeatAt ?? startedAt) + timeouts.heartbeatMs, stall), endsAttempt: true };
}

/** What a single state must satisfy, whatever led to it. */
export function checkState(state: WorkflowState): void {
  same(
    state.steps.map((s) => s.id),
    state.plan.steps.map((s) => s.id),
    "one step state per planned step, in plan order",
  );
  for (const step of state.steps) checkStep(state, step);
  checkCompletionOrder(state);
  checkWorkflowStatus(state);
  checkCompensationState(state);
  checkNextDeadline(state);
  checkInbox(state);
  checkLiveness(state);
}

/**
 * The diagnosis' liveness invariant, with the alarm where the object sets it: every open workflow has a next
 * deadline or names the outside party it waits for, and every open step says what is under way for it.
 */
function checkLiveness(state: WorkflowState): void {
  const found = diagnose(state, { alarmAt: nextDeadlineAt(state) ?? null, recentDecisions: [] });
  holds(found.healthy, `the diagnosis finds problems: ${found.problems.join("; ")}`);
  if (!isTerminal(state.status) && found.nextDeadline === null) {
    holds(found.blockedOn.some((entry) => entry.reason === "needs_operator" || entry.reason === "paused"), `${state.status} with no deadline names no outside party`);
  }
}

/**
 * The inbox keeps events in the order they came, within its limit; and, unless the workflow is paused, never an
 * event a step is waiting for: a wait takes a kept event as it starts, and an event for a wait is consumed at once.
 */
function checkInbox(state: WorkflowState): void {
  const inbox = state.inbox ?? [];
  holds(inbox.length <= MAX_INBOX_EVENTS, `the inbox holds ${inbox.length} events`);
  inbox.forEach((entry, i) => {
    holds(i === 0 || entry.seq > inbox[i - 1]!.seq, `inbox seq ${entry.seq} is out of order`);
    holds(entry.seq < (state.nextEventSeq ?? 1), `inbox seq ${entry.seq} is not below nextEventSeq ${state.nextEventSeq}`);
  });
  if (state.status === "paused") return;
  for (const step of state.steps) {
    const plan = planOf(state, step.id);
    const event = plan.kind === "waitForEvent" ? plan.waitForEvent.event : undefined;
    if (step.status !== "waiting" || event === undefined) continue;
    holds(!inbox.some((entry) => entry.event === event), `step ${step.id} waits for "${event}" while the inbox holds one`);
  }
}

function checkStep(state: WorkflowState, step: StepState): void {
  const where = `step ${step.id}`;
  step.attempts.forEach((a, i) => {
    holds(a.n === i + 1, `${where}: attempts are numbered 1..n, found #${a.n} at position ${i + 1}`);
    holds(i === step.attempts.length - 1 || !isActive(a), `${where}#${a.n}: only the latest attempt may be active`);
  });
  holds(step.attempt === step.attempts.length, `${where}: step.attempt ${step.attempt} is not its latest attempt`);
  const { maxAttempts } = planOf(state, step.id).retry;
  holds(step.budgetUsed <= maxAttempts, `${where}: ${step.budgetUsed} attempts spent, over maxAttempts ${maxAttempts}`);

  const last = latest(step);
  const active = activeOf(step);
  const plan = planOf(state, step.id);
  const { kind } = plan;
  // A redrive resets a step to pending but keeps its attempts: their numbers go on, so old reports stay stale.
  const redriven = (state.redriveCount ?? 0) > 0;
  if (step.nextRetryAt !== undefined) {
    holds(!active, `${where}: backs off while attempt #${active?.n} is active`);
    oneOf(step.status, ["retrying", "compensating"], `${where}: only a retrying or compensating step backs off`);
  }
  if (step.parked !== undefined) {
    // Parked on a host's open breaker: waiting for its release, with a backstop, and nothing running.
    holds(!active && step.nextRetryAt !== undefined, `${where}: parked on ${step.parked.host} while it runs or without a backstop`);
    oneOf(step.status, ["retrying", "compensating"], `${where}: only a retrying or compensating step is parked`);
  }
  holds(kind === "action" || step.attempts.every((a) => a.kind === "compensation"), `${where}: a ${kind} step has an action attempt`);
  const timed = step.status === "sleeping" || (step.status === "waiting" && kind === "waitForEvent");
  holds(timed === (step.timerAt !== undefined), `${where}: ${step.status} with timerAt ${step.timerAt}`);
  holds(timed === (step.waitingSince !== undefined), `${where}: ${step.status} with waitingSince ${step.waitingSince}`);
  if (timed) {
    holds(!active && (redriven || step.attempts.length === 0), `${where}: a ${step.status} step has attempts`);
  }
  const lastIs = (kind: string, status?: string): boolean => last?.kind === kind && (status === undefined || last.status === status);
  switch (step.status) {
    case "pending":
      holds(!active && (redriven || step.attempts.length === 0), `${where}: a pending step never had an attempt (before a redrive)`);
      break;
    case "sleeping":
      holds(kind === "sleep", `${where}: a ${kind} step sleeps`);
      break;
    case "waiting":
      if (plan.kind === "waitForEvent") {
        holds(step.timerAt === step.waitingSince! + plan.waitForEvent.timeoutMs, `${where}: waits until ${step.timerAt}, not its timeout after ${step.waitingSince}`);
        break;
      }
      holds(lastIs("action", step.status), `${where}: ${step.status} but its latest attempt is ${last?.kind} ${last?.status}`);
      break;
    case "scheduled":
    case "running":
      holds(lastIs("action", step.status), `${where}: ${step.status} but its latest attempt is ${last?.kind} ${last?.status}`);
      break;
    case "retrying":
      holds(lastIs("action") && step.nextRetryAt !== undefined, `${where}: retrying without an action attempt to retry or a time for it`);
      break;
    case "succeeded":
      // A sleep or a wait succeeds without an attempt.
      if (kind === "action") holds(lastIs("action", "succeeded"), `${where}: succeeded but its latest attempt is ${last?.kind} ${last?.status}`);
      else holds(!active, `${where}: a succeeded ${kind} step runs attempt #${active?.n}`);
      holds(step.output !== undefined, `${where}: a succeeded step has an output`);
      break;
    case "compensating":
      holds(lastIs("compensation"), `${where}: compensating but its latest attempt is ${last?.kind}`);
      holds(active !== undefined || step.nextRetryAt !== undefined, `${where}: a compensating step neither runs nor backs off`);
      break;
    case "compensated":
      holds(lastIs("compensation", "succeeded"), `${where}: compensated but its latest attempt is ${last?.kind} ${last?.status}`);
      break;
    case "failed":
    case "skipped":
    case "cancelled":
      holds(!active && step.nextRetryAt === undefined, `${where}: a ${step.status} step still runs or backs off`);
      break;
  }
}

/** Steps that succeeded and have not been reset by a redrive since: what compensation may have to undo. */
const COMPLETED_STATUSES: readonly StepStatus[] = ["succeeded", "compensating", "compensated", "failed", "skipped", "cancelled"];

function checkCompletionOrder(state: WorkflowState): void {
  const order = state.completionOrder;
  holds(new Set(order).size === order.length, `a step completes once: ${order.join(",")}`);
  for (const step of state.steps) {
    if (step.status === "succeeded") holds(order.includes(step.id), `succeeded ${step.id} is not in completionOrder ${order.join(",")}`);
  }
  for (const id of order) {
    const step = stepIn(state, id)!;
    // Once done, a step only moves on through the saga (compensating, compensated, or failed or skipped by an
    // operator there) or is stopped by a terminate mid-compensation.
    oneOf(step.status, COMPLETED_STATUSES, `${id} in completionOrder`);
    if (planOf(state, id).kind === "action") {
      holds(step.attempts.some((a) => a.kind === "action" && a.status === "succeeded"), `${id} in completionOrder without a succeeded action attempt`);
    }
  }
}

function checkWorkflowStatus(state: WorkflowState): void {
  const { status } = state;
  if (isTerminal(status)) {
    holds(state.endedAt !== undefined, `${status}: endedAt is set`);
    holds(nextDeadlineAt(state) === undefined, `${status}: no deadline is left`);
    for (const step of state.steps) {
      holds(!activeOf(step) && step.nextRetryAt === undefined && step.timerAt === undefined, `${status}: step ${step.id} still runs, backs off or has a timer`);
      oneOf(step.status, ENDED_STEP, `${status}: step ${step.id} has ended`);
    }
  } else {
    holds(state.endedAt === undefined, `${status}: endedAt is unset`);
  }
  if (status === "terminated") holds(state.error !== undefined, "terminated: the error says why");
  holds((status === "paused") === (state.pausedAt !== undefined), `${status} with pausedAt ${state.pausedAt}`);
  if (status === "paused") {
    holds(!state.compensation, "paused: not unwinding");
    // A step that failed for good while paused waits there for the resume to apply onFailure.
    for (const step of state.steps) {
      holds(!["cancelled", "compensating", "compensated"].includes(step.status), `paused: step ${step.id} is ${step.status}`);
    }
  }
  if (status === "completed") {
    for (const step of state.steps) oneOf(step.status, ["succeeded", "skipped"], `completed: step ${step.id}`);
    same(state.output, Object.fromEntries(state.steps.map((s) => [s.id, s.output ?? null])), "completed: output has every step's output");
  }
  if (status === "running") {
    holds(!state.compensation, "running: not unwinding");
    for (const step of state.steps) {
      holds(!["failed", "cancelled", "compensating", "compensated"].includes(step.status), `running: step ${step.id} is ${step.status}`);
    }
  }
  if (status === "needs_attention" && !state.compensation) {
    holds(state.steps.some((s) => s.status === "failed"), "needs_attention: some step has failed");
  }
  if (status === "failed") holds(!state.compensation, "failed: nothing was compensated");
}

function checkCompensationState(state: WorkflowState): void {
  const { compensation, status } = state;
  if (status === "compensating") holds(compensation !== undefined, "compensating: has a compensation queue");
  if (!compensation) return;
  // A terminate stops the saga where it is: its queue is left as it was, and nothing of it runs.
  oneOf(status, ["compensating", "needs_attention", "compensated", "cancelled", "terminated"], "unwinding");
  if (status === "compensated" || status === "cancelled") {
    holds(compensation.endStatus === status, `${status}: ends where the compensation said (${compensation.endStatus})`);
    holds(compensation.queue.length === 0, `${status}: nothing is left to compensate`);
  }
  const head = compensation.queue[0];
  for (const step of state.steps) {
    const active = activeOf(step);
    holds(active?.kind !== "action", `unwinding: step ${step.id} runs action attempt #${active?.n}`);
    holds(!["pending", "scheduled", "running", "waiting", "retrying", "sleeping"].includes(step.status), `unwinding: step ${step.id} is ${step.status}`);
    if (step.id !== head) {
      holds(!active && step.nextRetryAt === undefined, `unwinding: only the head of the queue (${head}) may run or back off, not ${step.id}`);
    }
  }
  const headStep = head === undefined ? undefined : stepIn(state, head);
  if (status === "compensating") {
    holds(headStep?.status === "compensating", `compensating: the head ${head} is ${headStep?.status}, not compensating`);
  }
  if (status === "needs_attention") {
    holds(
      headStep?.status === "failed" && latest(headStep)?.kind === "compensation",
      `needs_attention while unwinding: the head ${head} is ${headStep?.status}, not a failed compensation`,
    );
  }
}

/**
 * The earliest of: the workflow's deadline, every active attempt's, every backoff and every sleep or wait timer;
 * while paused, without the backoffs and timers (they start or finish work, which a pause holds).
 */
function checkNextDeadline(state: WorkflowState): void {
  if (isTerminal(state.status)) return;
  const held = state.status === "paused";
  const candidates: number[] = [];
  if (state.deadlineAt !== undefined && !state.compensation) candidates.push(state.deadlineAt);
  if (state.status === "needs_attention" && state.attentionDeadline !== undefined) candidates.push(state.attentionDeadline);
  holds((state.attentionDeadline !== undefined) === (state.status === "needs_attention" && state.plan.escalation !== undefined), `attentionDeadline ${state.attentionDeadline} while ${state.status}`);
  for (const step of state.steps) {
    const active = activeOf(step);
    if (active) candidates.push(attemptDeadlineAt(state, step, active).at);
    if (step.nextRetryAt !== undefined && !held) candidates.push(step.nextRetryAt);
    if (step.timerAt !== undefined && !held) candidates.push(step.timerAt);
  }
  const next = nextDeadlineAt(state);
  const earliest = candidates.length === 0 ? undefined : Math.min(...candidates);
  holds(next === earliest, `nextDeadlineAt is ${next}, the earliest deadline is ${earliest}`);
  if (state.status === "running" || state.status === "compensating") {
    holds(next !== undefined, `${state.status}: nothing will wake the workflow`);
  }
}
