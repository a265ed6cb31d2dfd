// Properties of the pure state machine over random DAG plans and random scripts of events: what must hold
// after every transition, whatever arrives in whatever order, and that a workflow always finishes once its
// agents behave. A failure prints the shrunk plan and the concrete events that led to it.
import fc from "fast-check";
import { queueCheckAt } from "../../src/domain/machine/queued-attempts";
import { describe, expect, it } from "vitest";
import { nextDeadlineAt, startWorkflow, transition, type TransitionResult, type WorkflowEvent } from "../../src/domain/machine";
import {
  ACTIVE_ATTEMPT_STATUSES,
  isTerminal,
  type Attempt,
  type StepState,
  type StepStatus,
  type WorkflowState,
} from "../../src/domain/state";
import {
  buildPlan,
  commandsArb,
  describeEvent,
  describePlan,
  eventOf,
  planShapeArb,
  seededRandom,
  timeOf,
  type Command,
  type PlanShape,
} from "./arbitraries";
import { T0 } from "./builders";

/** Runs per property; together they stay within a few seconds. */
const NUM_RUNS = { invariants: 600, coverage: 400, liveness: 400 };

const REPORTS = new Set<WorkflowEvent["type"]>(["AttemptClaimed", "AttemptSucceeded", "AttemptAccepted", "AttemptFailed"]);
const ENDED_STEP: readonly StepStatus[] = ["succeeded", "failed", "skipped", "compensated", "cancelled"];

const isActive = (attempt: Attempt | undefined): attempt is Attempt =>
  attempt !== undefined && ACTIVE_ATTEMPT_STATUSES.includes(attempt.status);
const latest = (step: StepState): Attempt | undefined => step.attempts[step.attempts.length - 1];
const activeOf = (step: StepState): Attempt | undefined => (isActive(latest(step)) ? latest(step) : undefined);
const stepIn = (state: WorkflowState, id: string): StepState | undefined => state.steps.find((s) => s.id === id);
const planOf = (state: WorkflowState, id: string) => state.plan.steps.find((s) => s.id === id)!;

/** A failed invariant: cheap enough to check thousands of times per property. */
function holds(condition: boolean, message: string): asserts condition {
  if (!condition) throw new Error(message);
}

/**
 * Equal as the store keeps them, which is JSON: a fast path, with the slow comparison only to explain a
 * difference (or to forgive a different key order).
 */
function same(actual: unknown, expected: unknown, message: string): void {
  if (JSON.stringify(actual) !== JSON.stringify(expected)) expect(actual, message).toEqual(expected);
}

const oneOf = <T>(value: T, allowed: readonly T[], message: string): void =>
  holds(allowed.includes(value), `${message}: ${String(value)} is not one of ${allowed.join(", ")}`);

/**
 * The contract's deadlines of an active attempt: in the queue (only when the step sets one), its whole run, the
 * silence between heartbeats; and, for a queued attempt, the supervisor's check that its message was not lost,
 * which never ends the attempt.
 */
function attemptDeadlineAt(state: WorkflowState, step: StepState, attempt: Attempt): { at: number; endsAttempt: boolean } {
  const { timeouts } = planOf(state, step.id);
  if (attempt.status === "scheduled") {
    const check = queueCheckAt(attempt);
    const timeout = timeouts.scheduleToStartMs === undefined ? Infinity : attempt.scheduledAt + timeouts.scheduleToStartMs;
    return timeout <= check ? { at: timeout, endsAttempt: true } : { at: check, endsAttempt: false };
  }
  const startedAt = attempt.startedAt ?? attempt.scheduledAt;
  return { at: Math.min(startedAt + timeouts.startToCloseMs, (attempt.lastHeartbeatAt ?? startedAt) + timeouts.heartbeatMs), endsAttempt: true };
}

/** What a single state must satisfy, whatever led to it. */
function checkState(state: WorkflowState): void {
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
  if (step.nextRetryAt !== undefined) {
    holds(!active, `${where}: backs off while attempt #${active?.n} is active`);
    oneOf(step.status, ["retrying", "compensating"], `${where}: only a retrying or compensating step backs off`);
  }
  const lastIs = (kind: string, status?: string): boolean => last?.kind === kind && (status === undefined || last.status === status);
  switch (step.status) {
    case "pending":
      holds(step.attempts.length === 0, `${where}: a pending step never had an attempt`);
      break;
    case "scheduled":
    case "running":
    case "waiting":
      holds(lastIs("action", step.status), `${where}: ${step.status} but its latest attempt is ${last?.kind} ${last?.status}`);
      break;
    case "retrying":
      holds(lastIs("action") && step.nextRetryAt !== undefined, `${where}: retrying without an action attempt to retry or a time for it`);
      break;
    case "succeeded":
      holds(lastIs("action", "succeeded"), `${where}: succeeded but its latest attempt is ${last?.kind} ${last?.status}`);
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

function checkCompletionOrder(state: WorkflowState): void {
  const succeededOnce = state.steps.filter((s) => s.attempts.some((a) => a.kind === "action" && a.status === "succeeded")).map((s) => s.id);
  holds(new Set(state.completionOrder).size === state.completionOrder.length, `a step completes once: ${state.completionOrder.join(",")}`);
  same([...state.completionOrder].sort(), succeededOnce.sort(), "completionOrder lists the steps whose action succeeded");
}

function checkWorkflowStatus(state: WorkflowState): void {
  const { status } = state;
  if (isTerminal(status)) {
    holds(state.endedAt !== undefined, `${status}: endedAt is set`);
    holds(nextDeadlineAt(state) === undefined, `${status}: no deadline is left`);
    for (const step of state.steps) {
      holds(!activeOf(step) && step.nextRetryAt === undefined, `${status}: step ${step.id} still runs or backs off`);
      oneOf(step.status, ENDED_STEP, `${status}: step ${step.id} has ended`);
    }
  } else {
    holds(state.endedAt === undefined, `${status}: endedAt is unset`);
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
  oneOf(status, ["compensating", "needs_attention", "compensated", "cancelled"], "unwinding");
  if (status === "compensated" || status === "cancelled") {
    holds(compensation.endStatus === status, `${status}: ends where the compensation said (${compensation.endStatus})`);
    holds(compensation.queue.length === 0, `${status}: nothing is left to compensate`);
  }
  const head = compensation.queue[0];
  for (const step of state.steps) {
    const active = activeOf(step);
    holds(active?.kind !== "action", `unwinding: step ${step.id} runs action attempt #${active?.n}`);
    holds(!["pending", "scheduled", "running", "waiting", "retrying"].includes(step.status), `unwinding: step ${step.id} is ${step.status}`);
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

function checkNextDeadline(state: WorkflowState): void {
  if (isTerminal(state.status)) return;
  const candidates: number[] = [];
  if (state.deadlineAt !== undefined && !state.compensation) candidates.push(state.deadlineAt);
  for (const step of state.steps) {
    const active = activeOf(step);
    if (active) candidates.push(attemptDeadlineAt(state, step, active).at);
    if (step.nextRetryAt !== undefined) candidates.push(step.nextRetryAt);
  }
  const next = nextDeadlineAt(state);
  const earliest = candidates.length === 0 ? undefined : Math.min(...candidates);
  holds(next === earliest, `nextDeadlineAt is ${next}, the earliest deadline is ${earliest}`);
  if (state.status === "running" || state.status === "compensating") {
    holds(next !== undefined, `${state.status}: nothing will wake the workflow`);
  }
}

type Result = TransitionResult<unknown>;
const replyOk = (result: Result): boolean => (result.reply as { ok: boolean }).ok;
const replyCode = (result: Result): string | undefined => (result.reply as { code?: string }).code;

/** What every transition must satisfy, given the state before it. */
function checkTransition(before: WorkflowState, untouched: WorkflowState, event: WorkflowEvent, now: number, result: Result): void {
  const { state } = result;
  same(before, untouched, "the input state is never mutated");
  holds(state.version === before.version + (result.changed ? 1 : 0), `version went ${before.version} → ${state.version}, changed=${result.changed}`);
  holds(state.updatedAt === (result.changed ? now : before.updatedAt), `updatedAt moves exactly when something changed (changed=${result.changed})`);
  if (!result.changed) {
    same(state, before, "an event that changed nothing leaves the state as it was");
    holds(result.effects.length === 0, "an event that changed nothing has no effects");
    const recorded = result.history.map((h) => h.type).filter((t) => t !== "stale_report_rejected");
    holds(recorded.length === 0, `an event that changed nothing records ${recorded.join(", ")}`);
  }
  holds(!isTerminal(before.status) || !result.changed, `a ${before.status} workflow never changes`);
  // A template that cannot render fails the attempt on purpose; every other refusal changes nothing.
  if (!replyOk(result) && replyCode(result) !== "render_failed") {
    holds(!result.changed, `a refused ${event.type} (${replyCode(result)}) changes nothing`);
    const expected = replyCode(result) === "stale_attempt" ? ["stale_report_rejected"] : [];
    same(result.history.map((h) => h.type), expected, `a refused ${event.type} (${replyCode(result)}) is noted only when stale`);
  }
  checkFencing(before, event, result);
  checkEffects(before, result);
  checkDependencies(state, result);
  checkCompensationProgress(before, result);
  checkOutcome(before, event, now, result);
  if (event.type === "DeadlinesReached") {
    const next = nextDeadlineAt(state);
    holds(next === undefined || next > now, `after a tick at ${now} the next deadline ${next} is already due`);
    const again = transition(state, event, now, () => 0.5);
    holds(!again.changed, `a second tick at the same instant changes something: ${again.history.map((h) => h.type).join(", ")}`);
  }
}

/** Only the step's active attempt may change anything; a heartbeat from any other changes nothing either. */
function checkFencing(before: WorkflowState, event: WorkflowEvent, result: Result): void {
  if (!("attempt" in event)) return;
  const step = stepIn(before, event.stepId);
  const active = step && activeOf(step);
  if (active?.n === event.attempt) return;
  holds(!REPORTS.has(event.type) || !replyOk(result), `${event.type} for an attempt that is not active is accepted`);
  holds(!result.changed, `${event.type} for an attempt that is not active changes the state`);
}

/** Every enqueue names a new attempt that is scheduled now, and every new attempt is enqueued. */
function checkEffects(before: WorkflowState, result: Result): void {
  const { state } = result;
  const label = (stepId: string, n: number, kind: string) => `${stepId}#${n} ${kind}`;
  const created = state.steps.flatMap((step) => {
    const known = stepIn(before, step.id)?.attempt ?? 0;
    return step.attempts.filter((a) => a.n > known).map((a) => label(step.id, a.n, a.kind));
  });
  same(result.effects.map((e) => label(e.stepId, e.attempt, e.kind)).sort(), created.sort(), "effects enqueue exactly the new attempts");
  for (const effect of result.effects) {
    const step = stepIn(state, effect.stepId);
    const attempt = step?.attempts.find((a) => a.n === effect.attempt);
    holds(attempt?.status === "scheduled", `enqueued ${effect.stepId}#${effect.attempt} is ${attempt?.status}, not scheduled`);
    holds(step?.attempt === effect.attempt, `enqueued ${effect.stepId}#${effect.attempt} is not the step's current attempt`);
  }
}

/** The saga: reverse completion order, one step at a time, the queue only ever losing its head. */
function checkCompensationProgress(before: WorkflowState, result: Result): void {
  const { state } = result;
  if (!state.compensation) return;
  const queue = state.compensation.queue;
  if (!before.compensation) {
    holds(new Set(queue).size === queue.length, `the compensation queue has duplicates: ${queue.join(",")}`);
    for (const id of queue) holds(planOf(state, id).compensate !== undefined, `${id} is queued but has nothing to compensate with`);
    const succeeded = [...before.completionOrder]
      .reverse()
      .filter((id) => stepIn(before, id)?.status === "succeeded" && planOf(before, id).compensate !== undefined);
    same(
      queue.filter((id) => succeeded.includes(id)),
      succeeded,
      "every succeeded step that can be undone is queued, in reverse order of completion",
    );
    return;
  }
  const was = before.compensation.queue;
  same(was.slice(was.length - queue.length), queue, "the compensation queue only loses its head");
  for (const id of was.slice(0, was.length - queue.length)) {
    oneOf(stepIn(state, id)?.status, ["compensated", "skipped"], `${id} left the compensation queue`);
  }
}

/** What each kind of event must do when it is accepted, as the contract describes it. */
function checkOutcome(before: WorkflowState, event: WorkflowEvent, now: number, result: Result): void {
  switch (event.type) {
    case "AttemptClaimed":
    case "AttemptAccepted":
    case "HeartbeatReceived":
      if (replyOk(result)) checkLiveReport(before, event, now, result.state);
      return;
    case "AttemptSucceeded":
      if (replyOk(result)) checkSuccess(before, event, result.state);
      return;
    case "AttemptFailed":
      if (replyOk(result)) checkFailure(before, event, now, result.state);
      return;
    case "DeadlinesReached":
      checkTick(before, now, result);
      return;
    case "CancelRequested": {
      const expectOk = !isTerminal(before.status) && before.compensation?.endStatus !== "compensated";
      holds(replyOk(result) === expectOk, `cancel in ${before.status} answered ${replyCode(result) ?? "ok"}`);
      if (expectOk && before.compensation) holds(!result.changed, "a repeated cancel changes nothing");
      if (expectOk && !before.compensation) {
        oneOf(result.state.status, ["compensating", "cancelled"], "cancel unwinds the workflow");
        holds(result.state.compensation?.endStatus === "cancelled", "cancel ends cancelled");
      }
      return;
    }
    case "StepRetryRequested":
    case "StepSkipRequested":
      checkOperatorStepAction(before, event, result);
      return;
    case "CompensationRequested":
      holds(replyOk(result) === (before.status === "needs_attention"), `compensate in ${before.status} answered ${replyCode(result) ?? "ok"}`);
      return;
  }
}

/** A claim starts the attempt, a 202 parks it as waiting, a heartbeat pushes its heartbeat deadline. */
function checkLiveReport(
  before: WorkflowState,
  event: WorkflowEvent & { type: "AttemptClaimed" | "AttemptAccepted" | "HeartbeatReceived" },
  now: number,
  state: WorkflowState,
): void {
  const was = stepIn(before, event.stepId)?.attempts[event.attempt - 1];
  const attempt = stepIn(state, event.stepId)?.attempts[event.attempt - 1];
  if (!was || !attempt || !isActive(was)) return;
  const where = `${event.stepId}#${event.attempt}`;
  if (event.type === "AttemptClaimed") {
    holds(attempt.startedAt === now || attempt.status === "failed", `${where} was claimed at ${now} but started at ${attempt.startedAt}`);
  } else if (event.type === "AttemptAccepted") {
    holds(attempt.status === "waiting", `${where} was accepted but is ${attempt.status}`);
  } else if (was.status !== "scheduled") {
    holds(attempt.lastHeartbeatAt === now, `${where} heartbeat at ${now} but its last heartbeat is ${attempt.lastHeartbeatAt}`);
  }
}

function checkSuccess(before: WorkflowState, event: WorkflowEvent & { type: "AttemptSucceeded" }, state: WorkflowState): void {
  const step = stepIn(state, event.stepId)!;
  const attempt = step.attempts[event.attempt - 1];
  holds(attempt?.status === "succeeded", `${event.stepId}#${event.attempt} succeeded but is ${attempt?.status}`);
  if (attempt.kind === "compensation") {
    holds(step.status === "compensated", `${event.stepId}: a successful compensation leaves it ${step.status}`);
    return;
  }
  holds(step.status === "succeeded", `${event.stepId}: a successful action leaves it ${step.status}`);
  same(step.output, event.output ?? null, `${event.stepId}: the output is the reported one`);
  holds(before.completionOrder.length + 1 === state.completionOrder.length && state.completionOrder.at(-1) === step.id, "the step completed last");
}

/** Retried with backoff (Retry-After honoured up to maxIntervalMs) while attempts remain; then onFailure. */
function checkFailure(before: WorkflowState, event: WorkflowEvent & { type: "AttemptFailed" }, now: number, state: WorkflowState): void {
  const was = stepIn(before, event.stepId)!;
  const step = stepIn(state, event.stepId)!;
  const attempt = step.attempts[event.attempt - 1]!;
  const { retry } = planOf(state, step.id);
  const where = `${step.id}#${event.attempt} (${attempt.kind})`;
  holds(attempt.status === "failed", `${where} failed but is ${attempt.status}`);
  if (event.error.retryable !== false && was.budgetUsed < retry.maxAttempts) {
    oneOf(step.status, [attempt.kind === "action" ? "retrying" : "compensating"], `${where} has attempts left`);
    const delay = (step.nextRetryAt ?? Number.NaN) - now;
    const floor = Math.min(event.retryAfterMs ?? 0, retry.maxIntervalMs);
    holds(delay >= floor && delay <= retry.maxIntervalMs, `${where} retries after ${delay} ms, not within [${floor}, ${retry.maxIntervalMs}]`);
    return;
  }
  // A step whose outcome is ambiguous (an attempt started and got no answer) is compensated right away.
  const undoing = attempt.kind === "action" && state.plan.onFailure === "compensate" && step.status === "compensating";
  holds(step.status === "failed" || undoing, `${where} has failed for good but is ${step.status}`);
  const expected: Record<string, readonly string[]> = {
    compensation: ["needs_attention"],
    compensate: ["compensating", "compensated"],
    escalate: ["needs_attention"],
    fail: ["failed"],
  };
  oneOf(state.status, expected[attempt.kind === "compensation" ? "compensation" : state.plan.onFailure]!, `after ${where} failed for good`);
}

/** The supervisor acts on every deadline that has passed and on nothing else. */
function checkTick(before: WorkflowState, now: number, result: Result): void {
  const { state } = result;
  if (isTerminal(before.status)) return;
  if (before.deadlineAt !== undefined && before.deadlineAt <= now && !before.compensation) {
    const allowed = before.plan.onFailure === "compensate" ? ["compensating", "compensated"] : ["failed"];
    oneOf(state.status, allowed, `the workflow deadline passed under onFailure=${before.plan.onFailure}`);
  }
  for (const was of before.steps) {
    const active = activeOf(was);
    if (!active) continue;
    const after = stepIn(state, was.id)!.attempts[active.n - 1]!;
    const deadline = attemptDeadlineAt(before, was, active);
    const due = deadline.endsAttempt && deadline.at <= now;
    const allowed = due ? ["timed_out", "cancelled"] : [active.status, "cancelled"];
    oneOf(after.status, allowed, `${was.id}#${active.n} ${due ? "is overdue" : "is not due"} at the tick`);
  }
}

function checkOperatorStepAction(
  before: WorkflowState,
  event: WorkflowEvent & { type: "StepRetryRequested" | "StepSkipRequested" },
  result: Result,
): void {
  const was = stepIn(before, event.stepId);
  const head = before.compensation?.queue[0];
  const allowed = before.status === "needs_attention" && was?.status === "failed" && (head === undefined || head === was.id);
  holds(replyOk(result) === allowed, `${event.type} for ${event.stepId} (${was?.status}) in ${before.status} answered ${replyCode(result) ?? "ok"}`);
  if (!allowed) return;
  const step = stepIn(result.state, event.stepId)!;
  if (event.type === "StepRetryRequested") {
    const attempt = latest(step);
    holds(attempt?.n === was.attempt + 1 && step.budgetUsed === 1, `a retried ${step.id} starts afresh (budget used ${step.budgetUsed})`);
    holds(attempt?.kind === (before.compensation ? "compensation" : "action"), `a retried ${step.id} retries the right kind`);
  } else {
    holds(step.status === "skipped", `a skipped ${step.id} is ${step.status}`);
    if (!before.compensation) same(step.output, event.output ?? null, `a skipped ${step.id} has the operator's output`);
  }
}

/** A step runs only once everything it depends on succeeded or was skipped, and then it runs. */
function checkDependencies(state: WorkflowState, result: Result): void {
  const satisfied = (id: string) => ["succeeded", "skipped"].includes(stepIn(state, id)?.status ?? "");
  for (const effect of result.effects) {
    if (effect.kind !== "action") continue;
    for (const dependency of planOf(state, effect.stepId).dependsOn) {
      holds(satisfied(dependency), `${effect.stepId} was dispatched before ${dependency} finished`);
    }
  }
  if (state.compensation || (state.status !== "running" && state.status !== "needs_attention")) return;
  for (const step of state.steps) {
    if (step.status !== "pending") continue;
    holds(!planOf(state, step.id).dependsOn.every(satisfied), `${step.id} is pending though everything it depends on finished`);
  }
}

/** A script played against one random plan, checking every transition; keeps a readable trace for failures. */
class Playthrough {
  state: WorkflowState;
  now = T0;
  readonly random: () => number;
  readonly trace: string[] = [];
  /** The compensation queue as it was first drawn up. */
  firstQueue?: string[];

  /** `check` runs after every transition instead of every invariant above. */
  constructor(
    readonly shape: PlanShape,
    seed: number,
    readonly check?: (before: WorkflowState, result: Result) => void,
  ) {
    this.random = seededRandom(seed);
    const started = startWorkflow({ tenant: "acme", id: "wf-prop", plan: buildPlan(shape), input: { amount: 42 }, now: T0 }, this.random);
    this.state = started.state;
    this.trace.push(`t+0 start → ${started.state.status}`);
    // Every attempt is new at the start: compare with the same steps before their first attempt.
    const unstarted = { ...started.state, steps: started.state.steps.map((s) => ({ ...s, attempt: 0, attempts: [] })) };
    this.guard(() => {
      checkState(started.state);
      checkEffects(unstarted, started as Result);
    });
  }

  send(event: WorkflowEvent, at = this.now): Result {
    this.now = Math.max(this.now, at);
    const before = this.state;
    const untouched = structuredClone(before);
    const result = transition(before, event, this.now, this.random) as Result;
    const reply = replyOk(result) ? "ok" : replyCode(result);
    this.trace.push(`t+${this.now - T0} ${describeEvent(event)} → ${String(reply)}, ${result.state.status}${result.changed ? "" : " (unchanged)"}`);
    if (!before.compensation && result.state.compensation) this.firstQueue = [...result.state.compensation.queue];
    this.guard(() => {
      if (this.check) return this.check(before, result);
      checkTransition(before, untouched, event, this.now, result);
      checkState(result.state);
      this.checkSagaOutcome(result.state);
    });
    this.state = result.state;
    return result;
  }

  play(commands: Command[]): this {
    for (const command of commands) this.send(eventOf(command, this.state), timeOf(command, this.state, this.now));
    return this;
  }

  /** Compensated or cancelled: every step that was queued for compensation was compensated or skipped. */
  private checkSagaOutcome(state: WorkflowState): void {
    if (state.status !== "compensated" && state.status !== "cancelled") return;
    for (const id of this.firstQueue ?? []) oneOf(stepIn(state, id)?.status, ["compensated", "skipped"], `${state.status}: queued step ${id}`);
  }

  /** Rethrows with the plan and the events so far, so a shrunk counterexample reads as a script. */
  guard(check: () => void): void {
    try {
      check();
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      throw new Error(`${message}\nplan: ${describePlan(this.shape)}\nevents:\n  ${this.trace.join("\n  ")}`, { cause: error });
    }
  }
}

/**
 * A deterministic agent that claims and completes every attempt at once, and otherwise lets time run to
 * the next deadline. An operator first unblocks a workflow that waits on people, as `resolve` says.
 */
function helpfulAgent(run: Playthrough, resolve: "compensate" | "retry" | "skip", budget = 200): number {
  for (let events = 0; events < budget; events += 1) {
    const { state } = run;
    if (isTerminal(state.status)) return events;
    if (state.status === "needs_attention") {
      const failed = state.compensation ? stepIn(state, state.compensation.queue[0] ?? "") : state.steps.find((s) => s.status === "failed");
      if (resolve === "compensate" || !failed) run.send({ type: "CompensationRequested" });
      else if (resolve === "retry") run.send({ type: "StepRetryRequested", stepId: failed.id });
      else run.send({ type: "StepSkipRequested", stepId: failed.id, output: { skipped: true } });
      continue;
    }
    const step = state.steps.find((s) => activeOf(s));
    if (step) {
      const attempt = activeOf(step)!;
      const event: WorkflowEvent =
        attempt.status === "scheduled"
          ? { type: "AttemptClaimed", stepId: step.id, attempt: attempt.n }
          : { type: "AttemptSucceeded", stepId: step.id, attempt: attempt.n, output: { done: step.id } };
      const result = run.send(event);
      run.guard(() => holds(replyOk(result), `a helpful agent's ${event.type} is refused (${replyCode(result)})`));
      continue;
    }
    const next = nextDeadlineAt(state);
    run.guard(() => holds(next !== undefined, `${state.status} with nothing active has no deadline to wake it`));
    run.send({ type: "DeadlinesReached" }, next);
  }
  run.guard(() => holds(false, `not finished after ${budget} helpful events (status ${run.state.status})`));
  return budget;
}

const seedArb = fc.integer({ min: 0, max: 0x7fffffff });

describe("the workflow state machine under random plans and events", () => {
  it("keeps its invariants after every event, in any order and at any time", () => {
    fc.assert(
      fc.property(planShapeArb(), seedArb, commandsArb(60), (shape, seed, commands) => {
        new Playthrough(shape, seed).play(commands);
      }),
      { numRuns: NUM_RUNS.invariants },
    );
  });

  it("compensates every unfinished step that had started an attempt when the workflow unwinds", () => {
    // As fenceUnfinishedSteps says of the steps it stops: "with an attempt that had already started: their
    // remote effect may have happened, so compensation must cover them too". Only this is checked here.
    const coversStartedSteps = (before: WorkflowState, result: Result): void => {
      if (before.compensation || !result.state.compensation) return;
      for (const step of result.state.steps) {
        const fenced = step.status === "cancelled";
        const started = step.attempts.find((a) => a.kind === "action" && a.startedAt !== undefined);
        if (fenced && started && planOf(before, step.id).compensate) {
          holds(
            result.state.compensation.queue.includes(step.id),
            `step ${step.id} was stopped after attempt #${started.n} had started, but is not queued for compensation`,
          );
        }
      }
    };
    fc.assert(
      fc.property(planShapeArb(), seedArb, commandsArb(60), (shape, seed, commands) => {
        new Playthrough(shape, seed, coversStartedSteps).play(commands);
      }),
      { numRuns: NUM_RUNS.coverage },
    );
  });

  it("always finishes once its agents do their work and an operator answers what needs attention", () => {
    fc.assert(
      fc.property(
        planShapeArb(),
        seedArb,
        commandsArb(40),
        fc.constantFrom("compensate" as const, "retry" as const, "skip" as const),
        (shape, seed, commands, resolve) => {
          const run = new Playthrough(shape, seed).play(commands);
          run.trace.push("-- helpful agent from here --");
          helpfulAgent(run, resolve);
        },
      ),
      { numRuns: NUM_RUNS.liveness },
    );
  });
});
