// The invariants of a transition, given the state before it: what every event must and must not do, as the contract
// describes it. The property tests check them after every transition of a random script.
import { attemptSends, MAX_INBOX_EVENTS, nextDeadlineAt, transition, type EventReply, type TransitionResult, type WorkflowEvent } from "../../src/domain/machine";
import type { StepPlan } from "../../src/domain/language/plan";
import { isTerminal, type WorkflowState } from "../../src/domain/machine/state";
import { activeOf, attemptDeadlineAt, holds, isActive, latest, oneOf, planOf, same, stepIn } from "./machine-state-invariants";

const REPORTS = new Set<WorkflowEvent["type"]>(["AttemptClaimed", "AttemptSucceeded", "AttemptAccepted", "AttemptFailed"]);

export type Result = TransitionResult<unknown>;
export const replyOk = (result: Result): boolean => (result.reply as { ok: boolean }).ok;
export const replyCode = (result: Result): string | undefined => (result.reply as { code?: string }).code;

/** What every transition must satisfy, given the state before it. */
export function checkTransition(before: WorkflowState, untouched: WorkflowState, event: WorkflowEvent, now: number, result: Result): void {
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
  const redriven = event.type === "RedriveRequested" && replyOk(result);
  holds(!isTerminal(before.status) || !result.changed || redriven, `a ${before.status} workflow never changes, but by a redrive`);
  // A template that cannot render fails the attempt on purpose; every other refusal changes nothing.
  if (!replyOk(result) && replyCode(result) !== "render_failed") {
    holds(!result.changed, `a refused ${event.type} (${replyCode(result)}) changes nothing`);
    const expected = replyCode(result) === "stale_attempt" ? ["stale_report_rejected"] : [];
    same(result.history.map((h) => h.type), expected, `a refused ${event.type} (${replyCode(result)}) is noted only when stale`);
  }
  checkFencing(before, event, result);
  checkEffects(before, result);
  checkCompletionOrderChange(before, event, result);
  checkDependencies(state, result);
  checkCompensationProgress(before, result);
  checkOutcome(before, event, now, result);
  // A resume runs the supervisor's tick too: afterwards nothing is due, and a tick at once changes nothing.
  if (event.type === "DeadlinesReached" || (event.type === "ResumeRequested" && replyOk(result))) {
    const next = nextDeadlineAt(state);
    holds(next === undefined || next > now, `after a ${event.type} at ${now} the next deadline ${next} is already due`);
    const again = transition(state, { type: "DeadlinesReached" }, now, () => 0.5);
    holds(!again.changed, `a tick at the same instant as a ${event.type} changes something: ${again.history.map((h) => h.type).join(", ")}`);
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

/**
 * Every enqueue names a new attempt that is scheduled now, or sends a queued one's message again (a resend uses
 * no attempt); every new attempt is enqueued. A paused workflow starts no attempt.
 */
export function checkEffects(before: WorkflowState, result: Result): void {
  const { state } = result;
  const label = (stepId: string, n: number, kind: string) => `${stepId}#${n} ${kind}`;
  const known = (stepId: string) => stepIn(before, stepId)?.attempt ?? 0;
  const created = state.steps.flatMap((step) => step.attempts.filter((a) => a.n > known(step.id)).map((a) => label(step.id, a.n, a.kind)));
  const sends = attemptSends(result.effects);
  const fresh = sends.filter((e) => e.attempt > known(e.stepId));
  same(fresh.map((e) => label(e.stepId, e.attempt, e.kind)).sort(), created.sort(), "effects enqueue exactly the new attempts");
  for (const effect of sends.filter((e) => e.attempt <= known(e.stepId))) {
    const was = stepIn(before, effect.stepId)?.attempts[effect.attempt - 1];
    const now = stepIn(state, effect.stepId)?.attempts[effect.attempt - 1];
    holds((now?.resends ?? 0) === (was?.resends ?? 0) + 1, `${effect.stepId}#${effect.attempt} is enqueued again but not as a resend`);
  }
  if (state.status === "paused") {
    holds(fresh.length === 0, `a paused workflow starts ${fresh.map((e) => `${e.stepId}#${e.attempt}`).join(", ")}`);
  }
  for (const effect of sends) {
    const step = stepIn(state, effect.stepId);
    const attempt = step?.attempts.find((a) => a.n === effect.attempt);
    holds(attempt?.status === "scheduled", `enqueued ${effect.stepId}#${effect.attempt} is ${attempt?.status}, not scheduled`);
    holds(step?.attempt === effect.attempt, `enqueued ${effect.stepId}#${effect.attempt} is not the step's current attempt`);
  }
  for (const effect of result.effects) {
    if (effect.type !== "WithdrawTask") continue;
    const was = stepIn(before, effect.stepId)?.attempts.find((a) => a.n === effect.attempt);
    const now = stepIn(state, effect.stepId)?.attempts.find((a) => a.n === effect.attempt);
    holds(was?.status === "scheduled" && was.pool === effect.pool, `withdrew ${effect.stepId}#${effect.attempt}, which did not wait in ${effect.pool}`);
    holds(now?.status !== "scheduled", `withdrew ${effect.stepId}#${effect.attempt}, which still waits`);
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
    case "EventReceived":
      checkEvent(before, event, now, result);
      return;
    case "PauseRequested":
    case "ResumeRequested":
    case "TerminateRequested":
      checkControl(before, event, now, result);
      return;
    case "RedriveRequested":
      checkRedrive(before, event, now, result);
      return;
  }
}

/** To the wait that waits longest when one waits (and the workflow is not paused); else kept, within the limit. */
function checkEvent(before: WorkflowState, event: WorkflowEvent & { type: "EventReceived" }, now: number, result: Result): void {
  const reply = result.reply as EventReply;
  const { state } = result;
  if (isTerminal(before.status)) {
    holds(!reply.ok && reply.code === "conflict", `an event for a ${before.status} workflow answered ${replyCode(result) ?? "ok"}`);
    return;
  }
  const waits = before.status === "paused" ? [] : before.steps.filter((s) => s.status === "waiting" && waitsFor(planOf(before, s.id), event.event));
  if (waits.length > 0) {
    const longest = waits.reduce((first, s) => (s.waitingSince! < first.waitingSince! ? s : first));
    holds(reply.ok && reply.consumed, `an event ${longest.id} waits for is not consumed`);
    const step = stepIn(state, longest.id)!;
    holds(step.status === "succeeded", `${longest.id}, waiting longest, did not get the event (${step.status})`);
    same(step.output, event.payload ?? null, `${longest.id}: its output is the event's payload`);
    holds((state.inbox ?? []).length <= (before.inbox ?? []).length, "a consumed event is not kept");
    return;
  }
  const inbox = before.inbox ?? [];
  if (inbox.length >= MAX_INBOX_EVENTS) {
    holds(!reply.ok && reply.code === "inbox_full", `an event for a full inbox answered ${replyCode(result) ?? "ok"}`);
    return;
  }
  holds(reply.ok && !reply.consumed, `an event nobody waits for (workflow ${before.status}) answered ${JSON.stringify(reply)}`);
  same(state.inbox?.at(-1), { seq: before.nextEventSeq ?? 1, event: event.event, ...(event.payload === undefined ? {} : { payload: event.payload }), receivedAt: now }, "the event is kept last");
}

/** Pause holds a running workflow; resume lets it go on; terminate ends any open one at once, compensating nothing. */
function checkControl(before: WorkflowState, event: WorkflowEvent & { type: "PauseRequested" | "ResumeRequested" | "TerminateRequested" }, now: number, result: Result): void {
  const { state } = result;
  const ok = replyOk(result);
  const answered = `${event.type} in ${before.status} answered ${replyCode(result) ?? "ok"}`;
  if (event.type === "PauseRequested") {
    holds(ok === (before.status === "running" || before.status === "paused"), answered);
    if (ok) holds(state.status === "paused" && state.pausedAt === (before.pausedAt ?? now), `a pause leaves ${state.status} paused since ${state.pausedAt}`);
    if (before.status === "paused") holds(!result.changed, "a second pause changes nothing");
    return;
  }
  if (event.type === "ResumeRequested") {
    holds(ok === (before.status === "paused"), answered);
    if (ok) holds(state.status !== "paused", "a resumed workflow is not paused");
    return;
  }
  holds(ok === !isTerminal(before.status), answered);
  if (!ok) return;
  holds(state.status === "terminated" && attemptSends(result.effects).length === 0, `a terminate leaves it ${state.status} with ${attemptSends(result.effects).length} attempts sent`);
  holds(state.error?.message === (event.by.reason ?? "terminated by an operator"), `terminated with error ${state.error?.message}`);
  for (const step of state.steps) {
    const was = stepIn(before, step.id)!;
    if (["succeeded", "compensated", "failed", "skipped"].includes(was.status)) same(step.status, was.status, `terminate leaves ${step.id} ${was.status}`);
  }
}

/** Runs an ended workflow again: what did not succeed (and what fromStep names, with what follows it) starts over. */
function checkRedrive(before: WorkflowState, event: WorkflowEvent & { type: "RedriveRequested" }, now: number, result: Result): void {
  const { state } = result;
  const redrivable = ["failed", "cancelled", "terminated"].includes(before.status);
  const known = event.fromStep === undefined || stepIn(before, event.fromStep) !== undefined;
  const expected = !redrivable ? "conflict" : !known ? "not_found" : undefined;
  holds(replyCode(result) === expected, `redrive of a ${before.status} workflow answered ${replyCode(result) ?? "ok"}, not ${expected ?? "ok"}`);
  if (expected) return;
  const redriveCount = (before.redriveCount ?? 0) + 1;
  holds(state.redriveCount === redriveCount, `redriveCount went ${before.redriveCount} → ${state.redriveCount}`);
  const { timeoutMs } = state.plan;
  holds(state.deadlineAt === (timeoutMs === undefined ? undefined : now + timeoutMs), `the workflow's deadline restarts from the redrive, not ${state.deadlineAt}`);
  oneOf(state.status, ["running", "completed"], "a redriven workflow");
  const rerun = downstreamOf(before, event.fromStep);
  const reset = redriveResetOf(event, result);
  for (const was of before.steps) {
    const step = stepIn(state, was.id)!;
    const keep = !rerun.has(was.id) && ["succeeded", "skipped"].includes(was.status);
    holds(reset.includes(was.id) === !keep, `${was.id} (${was.status}) ${keep ? "is kept" : "is reset"}, but the history says otherwise`);
    if (keep) {
      same(step, was, `kept ${was.id} is untouched`);
      continue;
    }
    holds(step.attempt >= was.attempt && step.budgetUsed <= 1, `reset ${was.id} starts afresh after attempt ${was.attempt}`);
    const newKey = was.status === "compensated" || (rerun.has(was.id) && was.status === "succeeded");
    holds(step.keyRound === (newKey ? redriveCount : was.keyRound), `reset ${was.id} (${was.status}) has keyRound ${step.keyRound}`);
  }
}

/** The step and everything that depends on it; one pass, as random plans list each step after its dependencies. */
function downstreamOf(state: WorkflowState, fromStep: string | undefined): Set<string> {
  const found = new Set<string>(fromStep === undefined ? [] : [fromStep]);
  for (const plan of state.plan.steps) if (plan.dependsOn.some((d) => found.has(d))) found.add(plan.id);
  return found;
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
  // Steps that finish as they start (a past sleep, a falsy when, an event already kept) may complete after it.
  holds(state.completionOrder[before.completionOrder.length] === step.id, "the step completed next");
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
  if (before.status === "paused") {
    holds(step.status === "failed" && state.status === "paused", `${where} failed for good while paused: it waits for the resume (${step.status}, ${state.status})`);
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
  // A sleep wakes and a wait gives up at its time, not before; a paused workflow holds both.
  for (const was of before.steps) {
    if (was.timerAt === undefined) continue;
    const after = stepIn(state, was.id)!;
    const acted = after.status !== was.status || after.timerAt !== was.timerAt;
    const due = before.status !== "paused" && was.timerAt <= now;
    if (due) holds(acted, `${was.id}'s timer at ${was.timerAt} was due at the tick at ${now}, but it is still ${after.status}`);
    else holds(!acted || after.status === "cancelled", `${was.id}'s timer at ${was.timerAt} was not due (or held) at ${now}, but it went ${after.status}`);
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
  if (event.type === "StepRetryRequested" && !before.compensation && planOf(before, step.id).kind !== "action") {
    // A sleep or a wait starts over without an attempt: it sleeps or waits again (or finishes at once).
    oneOf(step.status, ["sleeping", "waiting", "succeeded", "failed"], `a retried ${step.id}`);
    holds(step.attempt === was.attempt, `a retried ${step.id} makes no attempt`);
  } else if (event.type === "StepRetryRequested") {
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
  for (const effect of attemptSends(result.effects)) {
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

/** completionOrder only grows, by the steps that succeeded in this transition; a redrive drops the ones it resets. */
function checkCompletionOrderChange(before: WorkflowState, event: WorkflowEvent, result: Result): void {
  const reset = new Set(redriveResetOf(event, result));
  const kept = before.completionOrder.filter((id) => !reset.has(id));
  const order = result.state.completionOrder;
  same(order.slice(0, kept.length), kept, "completionOrder keeps what it had, in order");
  for (const id of order.slice(kept.length)) {
    holds(stepIn(before, id)?.status !== "succeeded" || reset.has(id), `${id} completed again without being reset`);
  }
}

/** The steps a successful redrive reset, as its history names them. */
function redriveResetOf(event: WorkflowEvent, result: Result): string[] {
  if (event.type !== "RedriveRequested" || !replyOk(result)) return [];
  const entry = result.history.find((h) => h.type === "workflow_redriven");
  return (entry?.data?.steps as string[] | undefined) ?? [];
}

function waitsFor(plan: StepPlan, event: string): boolean {
  return plan.kind === "waitForEvent" && plan.waitForEvent.event === event;
}
