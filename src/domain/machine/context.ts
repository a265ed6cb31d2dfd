import { backoffMs } from "./backoff";
import type { HistoryEntry } from "./history";
import { findStepPlan, type StepPlan } from "../language/plan";
import type { Attempt, AttemptKind, StepState, WorkflowState } from "./state";
import { renderTemplates, TemplateError, type TemplateContext } from "../language/templates";
import { queueCheckDelayMs } from "./queue-check";
import type { AttemptEffect, ChildEffect } from "./effects";
import { poolOffer, workerActionOf } from "./pool-placement";
import { ItemRowsOverlay, NO_ITEM_ROWS, type MapItemRows } from "./map/item-rows";
import { mapItemOf } from "../language/plan";

/** Lost-message checks after a resend: 2 min, 4 min … at most an hour apart. */
const QUEUE_CHECK_BACKOFF = { initialMs: 60_000, maxMs: 3_600_000, jitter: 0.2 };


/**
 * The working copy of one transition: the pure functions mutate `state` (a private clone of the input) and
 * append to `effects` and `history`, which the shell persists together.
 */
export class TransitionContext {
  /** The attempts to send or take back; the commit adds the rest of the effects (see commitPlan). */
  readonly effects: AttemptEffect[] = [];
  /** Children of `workflow` steps to start or close (see steps/workflow.ts, children.ts). */
  readonly childEffects: ChildEffect[] = [];
  readonly history: HistoryEntry[] = [];
  changed = false;
  /** The items of the workflow's maps: their rows as stored, with this transition's writes on top. */
  readonly items: ItemRowsOverlay;
  /** Each map's items as rendered in this transition (or why they could not be): read once, used by every item. */
  readonly renderedItems = new Map<string, unknown[] | string>();

  constructor(
    readonly state: WorkflowState,
    readonly now: number,
    readonly random: () => number,
    items: MapItemRows = NO_ITEM_ROWS,
  ) {
    this.items = new ItemRowsOverlay(items);
  }

  /** Appends to the history as part of a state change. */
  record(entry: HistoryEntry): void {
    this.history.push(entry);
    this.changed = true;
  }

  /** Appends to the history without changing the state, e.g. a refused report. */
  note(entry: HistoryEntry): void {
    this.history.push(entry);
  }

  step(stepId: string): StepState | undefined {
    return this.state.steps.find((step) => step.id === stepId);
  }

  plan(stepId: string): StepPlan {
    const plan = findStepPlan(this.state.plan, stepId);
    if (!plan) throw new Error(`no plan for step ${stepId}`);
    return plan;
  }

  /**
   * What templates read: the input, the workflow's id, and every step's output so far. A map's item step (`stepId`
   * of one) reads its `item` and `index` too, and its own output under its map's id, as a compensation reads its step's.
   */
  templateContext(stepId?: string): TemplateContext {
    const steps: TemplateContext["steps"] = {};
    for (const step of this.state.steps) {
      if (mapItemOf(step.id)) continue;
      steps[step.id] = { attempt: step.attempt, ...(step.output === undefined ? {} : { output: step.output }) };
    }
    const context: TemplateContext = { input: this.state.input, workflow: { id: this.state.id }, steps };
    const item = stepId === undefined ? undefined : mapItemOf(stepId);
    if (!item) return context;
    const own = this.step(stepId ?? "");
    const rendered = this.mapItems(item.map);
    steps[item.map] = { attempt: own?.attempt ?? 0, ...(own?.output === undefined ? {} : { output: own.output }) };
    return { ...context, item: Array.isArray(rendered) ? rendered[item.index] : undefined, index: item.index };
  }

  /**
   * A map's items: its literal array, or its template rendered against the input and upstream outputs (which do
   * not change while it runs); a string says why they are not an array. Rendered once per transition.
   */
  mapItems(mapId: string): unknown[] | string {
    const known = this.renderedItems.get(mapId);
    if (known !== undefined) return known;
    const plan = this.plan(mapId);
    let items: unknown[] | string = "not a map";
    if (plan.kind === "map") {
      try {
        const rendered = renderTemplates(plan.map.items, this.templateContext());
        items = Array.isArray(rendered) ? rendered : `map.items must be an array (got ${rendered === null ? "null" : typeof rendered})`;
      } catch (error) {
        if (!(error instanceof TemplateError)) throw error;
        items = `map.items: ${error.message}`;
      }
    }
    this.renderedItems.set(mapId, items);
    return items;
  }

  /** Starts a new attempt; the attempt number is the step's fencing token. */
  scheduleAttempt(step: StepState, kind: AttemptKind): void {
    step.attempt += 1;
    step.budgetUsed += 1;
    delete step.nextRetryAt;
    const attempt: Attempt = { n: step.attempt, kind, status: "scheduled", scheduledAt: this.now };
    step.attempts.push(attempt);
    step.status = kind === "action" ? "scheduled" : "compensating";
    this.record({ type: "step_scheduled", stepId: step.id, attempt: step.attempt, data: { kind } });
    // A worker task waits in its pool, which is durable: no message of ours to lose, so no lost-message check.
    const plan = this.plan(step.id);
    const worker = workerActionOf(plan, kind);
    if (worker) {
      attempt.pool = worker.pool;
      attempt.offeredAt = this.now;
      this.effects.push({ type: "EnqueueAttempt", stepId: step.id, attempt: step.attempt, kind, offer: poolOffer(this.state, plan, worker.pool) });
      return;
    }
    attempt.queueCheckAt = this.now + queueCheckDelayMs(this.random);
    this.effects.push({ type: "EnqueueAttempt", stepId: step.id, attempt: step.attempt, kind });
  }

  /**
   * Sends the task message of an attempt that is still queued once more: same number, no attempt used. Its next
   * lost-message check backs off, so a queue that keeps losing messages is not flooded with copies.
   */
  resendAttempt(step: StepState, attempt: Attempt): void {
    attempt.resends = (attempt.resends ?? 0) + 1;
    attempt.sentAt = this.now;
    attempt.queueCheckAt = this.now + backoffMs(attempt.resends, QUEUE_CHECK_BACKOFF, this.random);
    this.changed = true;
    this.effects.push({ type: "EnqueueAttempt", stepId: step.id, attempt: attempt.n, kind: attempt.kind });
  }
}
