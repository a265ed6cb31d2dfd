// Builders for the pure domain tests: small plans, events named in the past tense, and a runner that plays
// a script of events against the state machine with an explicit clock and a fixed random draw.
import { expect } from "vitest";
import { planWorkflow, type WorkflowPlan } from "../../src/domain/language/plan";
import type { ActedBy } from "../../src/domain/language/operator-commands";
import {
  startWorkflow,
  transition,
  type ChildEffect,
  type AttemptEffect as Effect,
  type HistoryEntryFields,
  type TransitionResult,
  type WorkflowEvent,
} from "../../src/domain/machine";
import type { DefinitionInput, HttpAction, Sleep, StepInput, WaitForEvent } from "../../src/domain/language/schemas";
import type { WorkerAction } from "../../src/domain/language/actions";
import type { Notify } from "../../src/domain/language/notify";
import type { ParentRef, StepError, StepState, StepStatus, WorkflowState, WorkflowStatus } from "../../src/domain/machine/state";
import { MemoryItemRows } from "../../src/domain/machine/map/memory-item-rows";

/** Every workflow starts at this instant; expected times are written as offsets from it. */
export const T0 = 1_700_000_000_000;

/** The middle of the range: jitter adds nothing, so every backoff is exact. */
export const fixedRandom = (): number => 0.5;

/** Small numbers keep expected times readable: retries wait 100, 200, 400 ms, never more than 1 s. */
export const TEST_RETRY = { maxAttempts: 3, initialIntervalMs: 100, backoffCoefficient: 2, maxIntervalMs: 1_000, jitter: 0.2 };

/** Heartbeats are due every second, the queue has half a second, an attempt five seconds. */
export const TEST_TIMEOUTS = { scheduleToStartMs: 500, startToCloseMs: 5_000, heartbeatMs: 1_000 };

export function httpAction(path: string, fields: Partial<HttpAction> = {}): HttpAction {
  return { type: "http", url: `https://remote.example/${path}`, ...fields };
}

/** A worker action on pool `pool`; `fields` override anything (a fallback, an input). */
export function workerAction(pool: string, fields: Partial<WorkerAction> = {}): WorkerAction {
  return { type: "worker", pool, ...fields };
}

/** A step that calls `https://remote.example/<id>`; `fields` override anything. */
export function step(id: string, fields: Partial<StepInput> = {}): StepInput {
  return { id, action: httpAction(id), ...fields };
}

/** A step with a compensate action calling `https://remote.example/<id>/undo`. */
export function undoable(id: string, fields: Partial<StepInput> = {}): StepInput {
  return step(id, { compensate: httpAction(`${id}/undo`), ...fields });
}

/** A `sleep` step: no action, only its timer. */
export function sleepStep(id: string, sleep: Sleep, fields: Partial<StepInput> = {}): StepInput {
  return { id, sleep, ...fields };
}

/** A `map` step over `items` whose item step calls `https://remote.example/<id>`; `map` overrides anything. */
export function mapStep(id: string, items: unknown[] | string, map: Record<string, unknown> = {}, fields: Partial<StepInput> = {}): StepInput {
  return { id, map: { items, step: { action: httpAction(id) }, ...map }, ...fields } as StepInput;
}

/** A `waitForEvent` step: no action, only its event and its timeout. */
export function waitStep(id: string, waitForEvent: WaitForEvent, fields: Partial<StepInput> = {}): StepInput {
  return { id, waitForEvent, ...fields };
}

/** A plan with the test retry policy and timeouts as the definition's defaults. */
export function plan(steps: StepInput[], options: Partial<Omit<DefinitionInput, "steps">> = {}): WorkflowPlan {
  return planWorkflow({
    name: "test-flow",
    defaults: { retry: TEST_RETRY, timeouts: TEST_TIMEOUTS },
    ...options,
    steps,
  });
}

// Events, in the past tense like the machine's own.
export const claimed = (stepId: string, attempt = 1) => ({ type: "AttemptClaimed" as const, stepId, attempt });
export const heartbeat = (stepId: string, attempt = 1, progress?: { value?: unknown }) => ({
  type: "HeartbeatReceived" as const,
  stepId,
  attempt,
  ...(progress ? { progress } : {}),
});
export const succeeded = (stepId: string, attempt = 1, output: unknown = { ok: true }) => ({
  type: "AttemptSucceeded" as const,
  stepId,
  attempt,
  output,
});
export const accepted = (stepId: string, attempt = 1) => ({ type: "AttemptAccepted" as const, stepId, attempt });
/** A transient failure, as an agent reports a 503. */
export const failed = (stepId: string, attempt = 1, fields: { error?: Partial<StepError>; retryAfterMs?: number } = {}) => ({
  type: "AttemptFailed" as const,
  stepId,
  attempt,
  error: { message: "HTTP 503", retryable: true, status: 503, ...fields.error },
  ...(fields.retryAfterMs === undefined ? {} : { retryAfterMs: fields.retryAfterMs }),
});
/** A permanent failure, as an agent reports a 422. */
export const failedPermanently = (stepId: string, attempt = 1, message = "HTTP 422") =>
  failed(stepId, attempt, { error: { message, retryable: false, status: 422 } });
export const deadlinesReached = () => ({ type: "DeadlinesReached" as const });
export const deadLettered = (stepId: string, attempt = 1) => ({ type: "TaskDeadLettered" as const, stepId, attempt });
/** Who the builders' operator commands and events come from, unless a test names someone. */
export const OPERATOR: ActedBy = { actor: "operator" };
export const cancelRequested = (by: ActedBy = OPERATOR) => ({ type: "CancelRequested" as const, by });
export const retryRequested = (stepId: string, by: ActedBy = OPERATOR) => ({ type: "StepRetryRequested" as const, stepId, by });
export const skipRequested = (stepId: string, output?: unknown, by: ActedBy = OPERATOR) => ({
  type: "StepSkipRequested" as const,
  stepId,
  ...(output === undefined ? {} : { output }),
  by,
});
export const compensationRequested = (by: ActedBy = OPERATOR) => ({ type: "CompensationRequested" as const, by });

export const eventReceived = (event: string, fields: { payload?: unknown; id?: string } = {}, by: ActedBy = OPERATOR) => ({
  type: "EventReceived" as const,
  event,
  ...(fields.payload === undefined ? {} : { payload: fields.payload }),
  ...(fields.id === undefined ? {} : { id: fields.id }),
  by,
});
export const pauseRequested = (by: ActedBy = OPERATOR) => ({ type: "PauseRequested" as const, by });
export const resumeRequested = (by: ActedBy = OPERATOR) => ({ type: "ResumeRequested" as const, by });
export const terminateRequested = (reason?: string) => ({ type: "TerminateRequested" as const, by: reason === undefined ? OPERATOR : { ...OPERATOR, reason } });
export const redriveRequested = (fromStep?: string, by: ActedBy = OPERATOR) => ({ type: "RedriveRequested" as const, ...(fromStep === undefined ? {} : { fromStep }), by });

/** Moves the clock forward inside a script. */
export interface Wait {
  wait: number;
}
export const wait = (ms: number): Wait => ({ wait: ms });
export type Script = (WorkflowEvent | Wait)[];

let workflowCount = 0;

/** A workflow started at `T0` (or `at`), moved along by events with an explicit clock. */
export class Run {
  state: WorkflowState;
  now: number;
  /** Every history entry so far, in order. */
  readonly log: HistoryEntryFields[] = [];
  readonly effects: Effect[] = [];
  /** The rows of its maps' items, as the object's store would keep them. */
  readonly rows = new MemoryItemRows();
  /** Children of `workflow` steps started or closed so far. */
  readonly childEffects: ChildEffect[] = [];

  constructor(
    workflowPlan: WorkflowPlan,
    options: { id?: string; input?: unknown; at?: number; parent?: ParentRef; placement?: { priority?: number; fairnessKey?: string }; notify?: Notify; startAt?: number } = {},
  ) {
    workflowCount += 1;
    this.now = options.at ?? T0;
    const startAt = options.startAt === undefined ? {} : { startAt: options.startAt };
    const started = startWorkflow(
      { tenant: "acme", id: options.id ?? `wf-${workflowCount}`, plan: workflowPlan, input: options.input, now: this.now, ...(options.parent ? { parent: options.parent } : {}), ...options.placement, ...(options.notify ? { notify: options.notify } : {}), ...startAt },
      fixedRandom,
    );
    this.state = started.state;
    this.rows.apply(started);
    this.log.push(...started.history);
    this.effects.push(...started.effects);
    this.childEffects.push(...started.childEffects);
  }

  wait(ms: number): this {
    this.now += ms;
    return this;
  }

  send<E extends WorkflowEvent>(event: E): ReturnType<typeof transition<E>> {
    const result = transition(this.state, event, this.now, fixedRandom, this.rows);
    this.state = result.state;
    this.rows.apply(result);
    this.log.push(...result.history);
    this.effects.push(...result.effects);
    this.childEffects.push(...result.childEffects);
    return result;
  }

  play(script: Script): this {
    for (const item of script) {
      if ("wait" in item) this.wait(item.wait);
      else this.send(item);
    }
    return this;
  }

  step(id: string): StepState {
    return stepOf(this.state, id);
  }
}

export function stepOf(state: WorkflowState, id: string): StepState {
  const found = state.steps.find((s) => s.id === id);
  if (!found) throw new Error(`no step ${id} in the test state`);
  return found;
}

/** `step_scheduled b#2`: the type, then the step and attempt when the entry names them. */
export function describeHistory(history: HistoryEntryFields[]): string[] {
  return history.map(
    (entry) => `${entry.type}${entry.stepId ? ` ${entry.stepId}` : ""}${entry.attempt === undefined ? "" : `#${entry.attempt}`}`,
  );
}

/** `enqueue b#2 compensation`, `withdraw b#1 from gpu`. */
export function describeEffects(effects: Effect[]): string[] {
  return effects.map((effect) =>
    effect.type === "WithdrawTask" ? `withdraw ${effect.stepId}#${effect.attempt} from ${effect.pool}` : `enqueue ${effect.stepId}#${effect.attempt} ${effect.kind}`,
  );
}

export function stepStatuses(state: WorkflowState, ids: string[]): Record<string, StepStatus> {
  return Object.fromEntries(ids.map((id) => [id, stepOf(state, id).status]));
}

/** One row of a transition table: what happened, the event under test, and what must follow. */
export interface TransitionCase {
  name: string;
  plan: WorkflowPlan;
  id?: string;
  input?: unknown;
  /** A delayed start's time: the workflow is created `scheduled` when it is after T0. */
  startAt?: number;
  given?: Script;
  when: WorkflowEvent;
  then: {
    status: WorkflowStatus;
    /** History types of this transition alone, e.g. `step_retry_scheduled a#1`. */
    history: string[];
    /** Effects of this transition alone, e.g. `enqueue a#2 action`. */
    effects: string[];
    steps?: Record<string, StepStatus>;
    /** Compared with `toMatchObject`, so a rejection's message may be left out. */
    reply?: object;
    changed?: boolean;
    /** Whatever the columns above cannot say. */
    check?: (result: TransitionResult<unknown>, before: WorkflowState, now: number) => void;
  };
}

/**
 * Plays a row and checks it, along with what holds for every transition: the input state is left
 * untouched, and the version rises by exactly one when something changed.
 */
export function expectTransition(row: TransitionCase): void {
  const run = new Run(row.plan, { id: row.id, input: row.input, ...(row.startAt === undefined ? {} : { startAt: row.startAt }) }).play(row.given ?? []);
  const before = run.state;
  const snapshot = structuredClone(before);
  const result = transition(before, row.when, run.now, fixedRandom, run.rows);

  expect(before, "the input state must not be mutated").toEqual(snapshot);
  expect(result.state.version).toBe(before.version + (result.changed ? 1 : 0));
  const { then } = row;
  if (then.reply) expect(result.reply).toMatchObject(then.reply);
  if (then.changed !== undefined) expect(result.changed).toBe(then.changed);
  expect(describeHistory(result.history)).toEqual(then.history);
  expect(describeEffects(result.effects)).toEqual(then.effects);
  expect(result.state.status).toBe(then.status);
  if (then.steps) expect(stepStatuses(result.state, Object.keys(then.steps))).toEqual(then.steps);
  then.check?.(result, before, run.now);
}
