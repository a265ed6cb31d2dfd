// Random plans and random event scripts for the state machine's property tests. A script is drawn in the
// abstract (step number, which attempt, how long to wait) and made concrete against the state it meets, so
// most reports hit the current attempt and shrinking keeps a script meaningful.
import fc from "fast-check";
import { DefinitionSchema } from "../../src/domain/language/definition";
import { planWorkflow, type WorkflowPlan } from "../../src/domain/language/plan";
import { nextDeadlineAt, type WorkflowEvent } from "../../src/domain/machine";
import { ESCALATION_DEFAULTS, type DefinitionInput, type OnFailure, type StepInput } from "../../src/domain/language/schemas";
import { activeAttempt, type StepError, type StepState, type WorkflowState } from "../../src/domain/machine/state";
import { httpAction, OPERATOR, step, T0, TEST_RETRY, TEST_TIMEOUTS, undoable } from "./builders";

/** The names waits wait for; events are sent with these and with one no step waits for. */
export const EVENT_NAMES = ["approved", "shipped"] as const;
const UNWAITED_EVENT = "unrelated";

/** What a step is: an `http` action, a sleep (for a while, or until a fixed time) or a wait for an event. */
export type KindShape =
  | { kind: "action" }
  | { kind: "sleep"; durationMs?: number; until?: number }
  | { kind: "wait"; event: number; timeoutMs: number; onTimeout?: "fail" | "skip" };

/** A `when` that always holds, one that never does (a missing path), or one reading the step's first dependency. */
export type WhenShape = "truthy" | "falsy" | "upstream";

export interface StepShape {
  kind: KindShape;
  /** Most steps have none. */
  when: WhenShape | undefined;
  /** Indexes of earlier steps. */
  dependsOn: number[];
  compensate: boolean;
  /** The compensate action reads the step's own output, as a refund reads the charge it undoes. */
  readsOwnOutput: boolean;
  maxAttempts: number;
  initialIntervalMs: number;
  timeouts: { scheduleToStartMs: number | undefined; startToCloseMs: number; heartbeatMs: number };
}

export interface PlanShape {
  steps: StepShape[];
  onFailure: NonNullable<DefinitionInput["onFailure"]>;
  timeoutMs?: number;
}

export const stepIdAt = (index: number): string => `s${index}`;

const kindArb: fc.Arbitrary<KindShape> = fc.oneof(
  { arbitrary: fc.constant({ kind: "action" as const }), weight: 4 },
  {
    arbitrary: fc.oneof(
      fc.constantFrom(0, 300, 2_000, 20_000).map((durationMs) => ({ kind: "sleep" as const, durationMs })),
      // A fixed time: still ahead when the step starts early in a script, already past when it starts late.
      fc.constant({ kind: "sleep" as const, until: T0 + 1_500 }),
    ),
    weight: 1,
  },
  {
    arbitrary: fc.record(
      {
        kind: fc.constant("wait" as const),
        event: fc.nat(EVENT_NAMES.length - 1),
        timeoutMs: fc.constantFrom(200, 1_500, 10_000),
        onTimeout: fc.constantFrom("fail" as const, "skip" as const),
      },
      { requiredKeys: ["kind", "event", "timeoutMs"] },
    ),
    weight: 1,
  },
);

const stepShapeArb = (options: { templates: boolean }): fc.Arbitrary<StepShape> =>
  fc.record({
    kind: kindArb,
    when: fc.oneof(
      { arbitrary: fc.constant(undefined), weight: 3 },
      { arbitrary: fc.constantFrom<WhenShape>("truthy", "falsy", "upstream"), weight: 1 },
    ),
    // Indexes at or past the step's own are dropped below, so removing a step while shrinking keeps a DAG.
    dependsOn: fc.uniqueArray(fc.integer({ min: 0, max: 4 }), { maxLength: 3 }),
    compensate: fc.boolean(),
    readsOwnOutput: options.templates ? fc.boolean() : fc.constant(false),
    maxAttempts: fc.integer({ min: 1, max: 4 }),
    initialIntervalMs: fc.constantFrom(TEST_RETRY.initialIntervalMs, 0, 700),
    timeouts: fc.record({
      // Undefined is the contract's default: no deadline while an attempt waits in our queue.
      scheduleToStartMs: fc.constantFrom(undefined, TEST_TIMEOUTS.scheduleToStartMs, 200, 2_000),
      startToCloseMs: fc.constantFrom(TEST_TIMEOUTS.startToCloseMs, 1_500, 20_000),
      heartbeatMs: fc.constantFrom(TEST_TIMEOUTS.heartbeatMs, 400, 3_000),
      // A stall clock shorter and longer than the heartbeats: only heartbeats with progress start it.
      progressMs: fc.constantFrom(undefined, undefined, 600, 2_500),
    }),
  });

/** One to six steps, each depending only on earlier ones, so every plan is a DAG. */
export function planShapeArb(options: { templates?: boolean } = {}): fc.Arbitrary<PlanShape> {
  return fc
    .record(
      {
        steps: fc.array(stepShapeArb({ templates: options.templates ?? false }), { minLength: 1, maxLength: 6 }),
        onFailure: fc.oneof(
          fc.constantFrom<OnFailure>("compensate", "escalate", "fail"),
          fc.constantFrom(...ESCALATION_DEFAULTS).map((then) => ({ escalate: { afterMs: 2_000, then } })),
        ),
        timeoutMs: fc.integer({ min: 1_000, max: 60_000 }),
      },
      { requiredKeys: ["steps", "onFailure"] },
    )
    .map((shape) => ({
      ...shape,
      steps: shape.steps.map((s, index) => ({ ...s, dependsOn: s.dependsOn.filter((d) => d < index) })),
    }));
}

/** The plan of a definition the API would accept: it goes through the same schema and graph checks. */
export function buildPlan(shape: PlanShape): WorkflowPlan {
  const steps: StepInput[] = shape.steps.map((s, index) => {
    const id = stepIdAt(index);
    const fields: Partial<StepInput> = {
      dependsOn: s.dependsOn.map(stepIdAt),
      retry: { maxAttempts: s.maxAttempts, initialIntervalMs: s.initialIntervalMs },
      timeouts: s.timeouts,
      ...(s.when === undefined ? {} : { when: whenTemplate(s.when, s.dependsOn) }),
    };
    const built = !s.compensate
      ? step(id, fields)
      : !s.readsOwnOutput
        ? undoable(id, fields)
        : step(id, { ...fields, compensate: httpAction(`${id}/undo`, { body: { undo: `{{ steps.${id}.output }}` } }) });
    return withKind(built, s.kind);
  });
  const definition = DefinitionSchema.parse({
    name: "test-flow",
    defaults: { retry: TEST_RETRY, timeouts: TEST_TIMEOUTS },
    onFailure: shape.onFailure,
    ...(shape.timeoutMs === undefined ? {} : { timeoutMs: shape.timeoutMs }),
    steps,
  });
  return planWorkflow(definition);
}

function whenTemplate(when: WhenShape, dependsOn: number[]): string {
  const first = dependsOn[0];
  if (when === "upstream" && first !== undefined) return `{{ steps.${stepIdAt(first)}.output }}`;
  return when === "falsy" ? "{{ input.missing }}" : "{{ input.amount }}";
}

/** The step as the kind it is: a sleep or a wait keeps everything but the action. */
function withKind(built: StepInput, kind: KindShape): StepInput {
  if (kind.kind === "action") return built;
  const { action: _action, ...rest } = built;
  if (kind.kind === "sleep") return { ...rest, sleep: kind.until === undefined ? { durationMs: kind.durationMs ?? 0 } : { until: kind.until } };
  const event = EVENT_NAMES[kind.event % EVENT_NAMES.length] ?? "approved";
  return { ...rest, waitForEvent: { event, timeoutMs: kind.timeoutMs, ...(kind.onTimeout === undefined ? {} : { onTimeout: kind.onTimeout }) } };
}

function describeKind(kind: KindShape): string {
  if (kind.kind === "action") return "";
  if (kind.kind === "sleep") return kind.until === undefined ? ` sleep${kind.durationMs}` : ` sleepUntil+${kind.until - T0}`;
  return ` wait(${EVENT_NAMES[kind.event % EVENT_NAMES.length]},${kind.timeoutMs}${kind.onTimeout === undefined ? "" : `,${kind.onTimeout}`})`;
}

export function describePlan(shape: PlanShape): string {
  const steps = shape.steps.map((s, index) => {
    const parts = [`${stepIdAt(index)}[${s.dependsOn.map(stepIdAt).join(",")}]${describeKind(s.kind)}`, `max${s.maxAttempts}`];
    if (s.when !== undefined) parts.push(`when:${s.when}`);
    if (s.compensate) parts.push(s.readsOwnOutput ? "undo(reads own output)" : "undo");
    if (s.initialIntervalMs !== TEST_RETRY.initialIntervalMs) parts.push(`backoff${s.initialIntervalMs}`);
    const t = s.timeouts;
    parts.push(`timeouts ${t.scheduleToStartMs}/${t.startToCloseMs}/${t.heartbeatMs}`);
    return parts.join(" ");
  });
  return `onFailure=${JSON.stringify(shape.onFailure)}${shape.timeoutMs === undefined ? "" : ` timeoutMs=${shape.timeoutMs}`}; ${steps.join("; ")}`;
}

/** Which attempt a report names: usually the step's current one, sometimes an older or a newer one. */
export type AttemptPick = { current: true } | { older: number } | { newer: number };

/**
 * Which step an event names, as an index read modulo the candidates. `focus` picks among the steps the
 * event is likely to matter for (an active attempt for a report, the failed step for an operator), so
 * scripts get far; `ghost` names a step no plan has.
 */
export type StepPick = { focus: number } | { any: number } | { ghost: true };

/** `progress` is what a working agent does next: claim a queued attempt, complete a claimed one. */
export type ReportKind = "progress" | "claim" | "heartbeat" | "succeed" | "accept";

export type Command = { advanceMs: number } & (
  | { kind: "report"; report: ReportKind; step: StepPick; pick: AttemptPick; value?: unknown }
  | { kind: "fail"; step: StepPick; pick: AttemptPick; retryable: boolean | undefined; retryAfterMs?: number }
  /** `toDeadline` jumps to the next deadline itself (plus `advanceMs`), or to just before it. */
  | { kind: "tick"; toDeadline?: "at" | "just_before" }
  | { kind: "cancel" }
  | { kind: "retry"; step: StepPick }
  | { kind: "skip"; step: StepPick; value?: unknown }
  | { kind: "compensate" }
  /** `name` picks among the names the plan's waits wait for, and one nobody waits for. */
  | { kind: "event"; name: number; value?: unknown }
  | { kind: "pause" }
  | { kind: "resume" }
  | { kind: "terminate"; reason?: string }
  | { kind: "redrive"; from?: StepPick }
);

/** Agents answer within moments; the supervisor's ticks may come much later, past several deadlines. */
const reportAdvanceArb = fc.oneof(
  { arbitrary: fc.constant(0), weight: 6 },
  { arbitrary: fc.integer({ min: 1, max: 300 }), weight: 3 },
  { arbitrary: fc.integer({ min: 301, max: 3_000 }), weight: 1 },
);
const tickAdvanceArb = fc.oneof(
  { arbitrary: fc.constant(0), weight: 3 },
  { arbitrary: fc.integer({ min: 1, max: 300 }), weight: 2 },
  { arbitrary: fc.integer({ min: 301, max: 3_000 }), weight: 2 },
  { arbitrary: fc.integer({ min: 3_001, max: 30_000 }), weight: 1 },
);

const pickArb: fc.Arbitrary<AttemptPick> = fc.oneof(
  { arbitrary: fc.constant({ current: true as const }), weight: 8 },
  { arbitrary: fc.integer({ min: 1, max: 3 }).map((older) => ({ older })), weight: 1 },
  { arbitrary: fc.integer({ min: 1, max: 2 }).map((newer) => ({ newer })), weight: 1 },
);

const stepArb: fc.Arbitrary<StepPick> = fc.oneof(
  { arbitrary: fc.nat(5).map((focus) => ({ focus })), weight: 10 },
  { arbitrary: fc.nat(5).map((any) => ({ any })), weight: 5 },
  { arbitrary: fc.constant({ ghost: true as const }), weight: 1 },
);
const reportKindArb = fc.oneof(
  { arbitrary: fc.constant<ReportKind>("progress"), weight: 6 },
  { arbitrary: fc.constantFrom<ReportKind>("claim", "succeed", "heartbeat", "accept"), weight: 4 },
);
const valueArb = fc.constantFrom<unknown>(undefined, null, { ok: true }, 7, "done", { id: "ch_1", amount: 42 });

export const commandArb: fc.Arbitrary<Command> = fc.oneof(
  {
    arbitrary: fc.record({
      advanceMs: reportAdvanceArb,
      kind: fc.constant("report" as const),
      report: reportKindArb,
      step: stepArb,
      pick: pickArb,
      value: valueArb,
    }),
    weight: 20,
  },
  {
    arbitrary: fc.record(
      {
        advanceMs: reportAdvanceArb,
        kind: fc.constant("fail" as const),
        step: stepArb,
        pick: pickArb,
        retryable: fc.constantFrom(true, undefined, false),
        retryAfterMs: fc.integer({ min: 0, max: 5_000 }),
      },
      { requiredKeys: ["advanceMs", "kind", "step", "pick", "retryable"] },
    ),
    weight: 3,
  },
  {
    arbitrary: fc.record(
      { advanceMs: tickAdvanceArb, kind: fc.constant("tick" as const), toDeadline: fc.constantFrom("at" as const, "just_before" as const) },
      { requiredKeys: ["advanceMs", "kind"] },
    ),
    weight: 5,
  },
  { arbitrary: fc.record({ advanceMs: reportAdvanceArb, kind: fc.constant("cancel" as const) }), weight: 1 },
  { arbitrary: fc.record({ advanceMs: reportAdvanceArb, kind: fc.constant("retry" as const), step: stepArb }), weight: 2 },
  { arbitrary: fc.record({ advanceMs: reportAdvanceArb, kind: fc.constant("skip" as const), step: stepArb, value: valueArb }), weight: 2 },
  { arbitrary: fc.record({ advanceMs: reportAdvanceArb, kind: fc.constant("compensate" as const) }), weight: 1 },
  {
    arbitrary: fc.record({ advanceMs: reportAdvanceArb, kind: fc.constant("event" as const), name: fc.nat(4), value: valueArb }, { requiredKeys: ["advanceMs", "kind", "name"] }),
    weight: 3,
  },
  { arbitrary: fc.record({ advanceMs: tickAdvanceArb, kind: fc.constant("pause" as const) }), weight: 1 },
  { arbitrary: fc.record({ advanceMs: tickAdvanceArb, kind: fc.constant("resume" as const) }), weight: 2 },
  {
    arbitrary: fc.record({ advanceMs: reportAdvanceArb, kind: fc.constant("terminate" as const), reason: fc.constant("stop") }, { requiredKeys: ["advanceMs", "kind"] }),
    weight: 1,
  },
  {
    arbitrary: fc.record({ advanceMs: reportAdvanceArb, kind: fc.constant("redrive" as const), from: stepArb }, { requiredKeys: ["advanceMs", "kind"] }),
    weight: 2,
  },
);

export const commandsArb = (maxLength = 60): fc.Arbitrary<Command[]> => fc.array(commandArb, { maxLength, size: "max" });

/** A small deterministic generator (mulberry32), so a failing case replays with the same jitter. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** When the command happens: time only moves forward. */
export function timeOf(command: Command, state: WorkflowState, now: number): number {
  if (command.kind === "tick" && command.toDeadline) {
    const deadline = nextDeadlineAt(state);
    if (deadline !== undefined) {
      const at = command.toDeadline === "at" ? deadline + command.advanceMs : deadline - 1;
      return Math.max(now, at);
    }
  }
  return now + command.advanceMs;
}

function stepIdOf(state: WorkflowState, pick: StepPick, focus: (step: StepState) => boolean): string {
  if ("ghost" in pick) return "ghost";
  const candidates = "focus" in pick ? state.steps.filter(focus) : [];
  const from = candidates.length > 0 ? candidates : state.steps;
  const index = "focus" in pick ? pick.focus : pick.any;
  return from[index % from.length]?.id ?? "ghost";
}

/** The step an operator may act on: the compensation that failed, or any failed step. */
function operatorFocus(state: WorkflowState): (step: StepState) => boolean {
  const head = state.compensation?.queue[0];
  return (step) => step.status === "failed" && (head === undefined || step.id === head);
}

const reportFocus = (step: StepState): boolean => activeAttempt(step) !== undefined;

function attemptNumber(state: WorkflowState, stepId: string, pick: AttemptPick): number {
  const current = state.steps.find((s) => s.id === stepId)?.attempt ?? 1;
  if ("older" in pick) return Math.max(0, current - pick.older);
  if ("newer" in pick) return current + pick.newer;
  return current;
}

function reportType(kind: ReportKind, state: WorkflowState, stepId: string): ReportKind {
  if (kind !== "progress") return kind;
  const step = state.steps.find((s) => s.id === stepId);
  return step && activeAttempt(step)?.status !== "scheduled" ? "succeed" : "claim";
}

/** The concrete event a command stands for in the given state. */
export function eventOf(command: Command, state: WorkflowState): WorkflowEvent {
  switch (command.kind) {
    case "report": {
      const stepId = stepIdOf(state, command.step, reportFocus);
      const target = { stepId, attempt: attemptNumber(state, stepId, command.pick) };
      const report = reportType(command.report, state, stepId);
      if (report === "claim") return { type: "AttemptClaimed", ...target };
      if (report === "accept") return { type: "AttemptAccepted", ...target };
      if (report === "succeed") return { type: "AttemptSucceeded", ...target, output: command.value };
      return { type: "HeartbeatReceived", ...target, ...(command.value === undefined ? {} : { progress: { value: command.value } }) };
    }
    case "fail": {
      const stepId = stepIdOf(state, command.step, reportFocus);
      const error: StepError = {
        message: command.retryable === false ? "HTTP 422" : "HTTP 503",
        ...(command.retryable === undefined ? {} : { retryable: command.retryable }),
      };
      return {
        type: "AttemptFailed",
        stepId,
        attempt: attemptNumber(state, stepId, command.pick),
        error,
        ...(command.retryAfterMs === undefined ? {} : { retryAfterMs: command.retryAfterMs }),
      };
    }
    case "tick":
      return { type: "DeadlinesReached" };
    case "cancel":
      return { type: "CancelRequested", by: OPERATOR };
    case "retry":
      return { type: "StepRetryRequested", stepId: stepIdOf(state, command.step, operatorFocus(state)), by: OPERATOR };
    case "skip": {
      const stepId = stepIdOf(state, command.step, operatorFocus(state));
      return { type: "StepSkipRequested", stepId, ...(command.value === undefined ? {} : { output: command.value }), by: OPERATOR };
    }
    case "compensate":
      return { type: "CompensationRequested", by: OPERATOR };
    case "event": {
      const names = [...new Set(state.plan.steps.flatMap((s) => (s.kind === "waitForEvent" ? [s.waitForEvent.event] : []))), UNWAITED_EVENT];
      const event = names[command.name % names.length] ?? UNWAITED_EVENT;
      return { type: "EventReceived", event, ...(command.value === undefined ? {} : { payload: command.value }), by: OPERATOR };
    }
    case "pause":
      return { type: "PauseRequested", by: OPERATOR };
    case "resume":
      return { type: "ResumeRequested", by: OPERATOR };
    case "terminate":
      return { type: "TerminateRequested", by: command.reason === undefined ? OPERATOR : { ...OPERATOR, reason: command.reason } };
    case "redrive": {
      if (!command.from) return { type: "RedriveRequested", by: OPERATOR };
      // Focus on a succeeded step: re-running one is what fromStep is for.
      return { type: "RedriveRequested", fromStep: stepIdOf(state, command.from, (s) => s.status === "succeeded"), by: OPERATOR };
    }
  }
}

/** `AttemptFailed s1#2 retryable=false`: short enough to read a whole script at a glance. */
export function describeEvent(event: WorkflowEvent): string {
  if (event.type === "EventReceived") return `${event.type} ${event.event}${event.payload === undefined ? "" : ` ${JSON.stringify(event.payload)}`}`;
  if (event.type === "RedriveRequested") return `${event.type}${event.fromStep === undefined ? "" : ` from ${event.fromStep}`}`;
  if (!("stepId" in event)) return event.type;
  const attempt = "attempt" in event ? `#${event.attempt}` : "";
  const extra =
    event.type === "AttemptFailed"
      ? ` retryable=${String(event.error.retryable)}${event.retryAfterMs === undefined ? "" : ` retryAfterMs=${event.retryAfterMs}`}`
      : "";
  return `${event.type} ${event.stepId}${attempt}${extra}`;
}
