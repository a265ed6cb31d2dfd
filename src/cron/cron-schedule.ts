import { DurableObject } from "cloudflare:workers";
import {
  cancelSent,
  createSchedule,
  deferLimitOf,
  fireDue,
  pauseSchedule,
  resumeSchedule,
  startDeferred,
  startFinished,
  triggerFire,
  workflowEnded,
  workflowIdOf,
} from "../domain/cron/machine";
import type { ScheduleSpecInput } from "../domain/cron/spec";
import { ScheduleStateSchema, type ScheduleState } from "../domain/cron/state";
import { toScheduleView, type ScheduleView } from "../domain/cron/view";
import { isTerminal } from "../domain/machine/state";
import { schedulerFor } from "../workflow/client";
import { startWorkflowRun } from "../admission/start-workflow";

/** Pending starts are made right after their commit; should this instance die first, the alarm makes them then. */
const START_LEASE_MS = 5_000;

const NOT_FOUND = { ok: false, code: "not_found", message: "schedule not found" } as const;

export interface CreateScheduleRequest {
  tenant: string;
  spec: ScheduleSpecInput;
  /** Hash of the create request's body: the same id with another body is a conflict, not a replay. */
  requestHash: string;
}

type Stored = { state: ScheduleState; requestHash: string };

/**
 * One schedule: the scheduler of its own fires, its alarm always at the next one (the same supervisor pattern as
 * a workflow's object; nothing polls and no sweep walks all schedules). Each method loads, applies a pure
 * transition (src/domain/cron/machine.ts), stores, then starts and cancels workflows.
 */
export class CronSchedule extends DurableObject<Env> {
  private cached: Stored | undefined;

  async create(request: CreateScheduleRequest): Promise<{ ok: true; created: boolean; schedule: ScheduleView } | { ok: false; code: "conflict"; message: string }> {
    const existing = await this.load();
    if (existing) {
      if (existing.requestHash === request.requestHash) return { ok: true, created: false, schedule: toScheduleView(existing.state) };
      return { ok: false, code: "conflict", message: `schedule "${request.spec.id}" already exists with a different body` };
    }
    const state = createSchedule(request.tenant, request.spec, Date.now());
    await this.save({ state, requestHash: request.requestHash });
    return { ok: true, created: true, schedule: toScheduleView(state) };
  }

  async describe(): Promise<ScheduleView | undefined> {
    const stored = await this.load();
    return stored && toScheduleView(stored.state);
  }

  pause() {
    return this.change((state, now) => pauseSchedule(state, now));
  }

  resume() {
    return this.change((state, now) => resumeSchedule(state, now));
  }

  /** Fire now, under the overlap policy; the workflow is started before this answers. */
  async trigger() {
    const stored = await this.load();
    if (!stored) return NOT_FOUND;
    const previousOpen = await this.openWorkflowRuns(stored.state);
    return this.change((state, now) => triggerFire(state, now, previousOpen));
  }

  /** Deletes the schedule and its alarm; the workflows it started run on. */
  async remove(): Promise<{ ok: true } | typeof NOT_FOUND> {
    if (!(await this.load())) return NOT_FOUND;
    await this.ctx.storage.deleteAlarm();
    await this.ctx.storage.deleteAll();
    this.cached = undefined;
    return { ok: true };
  }

  /** The workflow a fire started has ended (it tells us): a buffered fire starts now. */
  async workflowEnded(workflowId: string) {
    return this.change((state, now) => workflowEnded(state, workflowId, now));
  }

  override async alarm(): Promise<void> {
    const stored = await this.load();
    if (!stored) return;
    const previousOpen = await this.openWorkflowRuns(stored.state);
    await this.change((state, now) => {
      // An open workflow that ended without telling us (its notice lost) is found here, at the next fire.
      const settled = !previousOpen && state.open !== undefined ? workflowEnded(state, state.open, now) : state;
      return fireDue(settled, now, previousOpen);
    });
  }

  /** Load, apply, store, then make the pending starts and cancel; the alarm is left at the next fire. */
  private async change(apply: (state: ScheduleState, now: number) => ScheduleState): Promise<{ ok: true; schedule: ScheduleView } | typeof NOT_FOUND> {
    const stored = await this.load();
    if (!stored) return NOT_FOUND;
    let state = apply(stored.state, Date.now());
    await this.save({ ...stored, state });
    state = await this.performEffects(state);
    return { ok: true, schedule: toScheduleView(state) };
  }

  private async performEffects(initial: ScheduleState): Promise<ScheduleState> {
    let state = initial;
    const stored = this.cached!;
    if (state.pendingCancel) {
      // With compensation, as an operator's cancel; one that has ended meanwhile answers 409, which is fine.
      const by = { actor: `schedule:${state.id}`, reason: "overlap policy cancel_previous: a new fire is due" };
      await schedulerFor(this.env, state.tenant, state.pendingCancel).command({ command: "cancel", by });
      state = cancelSent(state, Date.now());
      await this.save({ ...stored, state });
    }
    // Deferred by back-pressure: the alarm tries again at deferredUntil, not every call that comes in before.
    if (state.deferredUntil !== undefined && state.deferredUntil > Date.now()) return state;
    for (const at of [...state.pendingStarts]) {
      const outcome = await this.start(state, at);
      // Left pending: the alarm (START_LEASE_MS on) makes the start again; it is idempotent by the fire's id.
      if (outcome === "try_again") continue;
      state = "deferral" in outcome ? startDeferred(state, at, outcome.deferral, Date.now()) : startFinished(state, at, outcome, Date.now());
      await this.save({ ...stored, state });
    }
    return state;
  }

  /**
   * A refusal (a reference that no longer resolves) is the fire's outcome. Back-pressure is not: the start is
   * deferred for as long as the admission asks, and made regardless at the end of the fire's catch-up window,
   * since no client will retry it. A call that broke off (the workflow's object reset mid-start) says nothing
   * about the fire: it is tried again, for as long as the fire would still be caught up, then recorded as failed.
   */
  private async start(state: ScheduleState, at: number): Promise<FireStart> {
    const id = workflowIdOf(state, at);
    const limit = deferLimitOf(state, at);
    try {
      const now = Date.now();
      const result = await startWorkflowRun(this.env, state.tenant, { id, ...state.workflow }, { schedule: state.id, admitted: now >= limit });
      if (result.ok) return { ok: true };
      if (result.code !== "overloaded") return { ok: false, error: `${result.code}: ${result.message}` };
      return { deferral: { reason: `${result.code}: ${result.message}`, retryAt: Math.min(limit, now + result.retryAfterSeconds * 1_000) } };
    } catch (error) {
      if (Date.now() <= limit) return "try_again";
      return { ok: false, error: String(error) };
    }
  }

  /** Whether the workflow of the latest started fire is still open (or a start is still pending). */
  private async openWorkflowRuns(state: ScheduleState): Promise<boolean> {
    if (state.pendingStarts.length > 0) return true;
    if (state.open === undefined) return false;
    const view = await schedulerFor(this.env, state.tenant, state.open).describe();
    return view !== undefined && !isTerminal(view.status);
  }

  private async load(): Promise<Stored | undefined> {
    if (this.cached) return this.cached;
    const raw = await this.ctx.storage.get<{ state: unknown; requestHash: string }>("schedule");
    if (!raw) return undefined;
    this.cached = { state: ScheduleStateSchema.parse(raw.state), requestHash: raw.requestHash };
    return this.cached;
  }

  /** Stores the schedule with its alarm: at the next fire, or sooner while starts are pending (or deferred). */
  private async save(stored: Stored): Promise<void> {
    this.cached = stored;
    const { state } = stored;
    await this.ctx.storage.put("schedule", stored);
    const at = state.pendingStarts.length > 0 || state.pendingCancel ? this.pendingAlarmAt(state) : state.nextFireAt;
    if (at === undefined) await this.ctx.storage.deleteAlarm();
    else await this.ctx.storage.setAlarm(at);
  }

  /** Pending work is retried after its lease, or when its deferral ends, but never past the next fire. */
  private pendingAlarmAt(state: ScheduleState): number {
    const retryAt = state.deferredUntil !== undefined && !state.pendingCancel ? state.deferredUntil : Date.now() + START_LEASE_MS;
    return state.nextFireAt === undefined ? retryAt : Math.min(retryAt, state.nextFireAt);
  }
}

/** What became of one pending start: made, refused for good, deferred by back-pressure, or to be tried again. */
type FireStart = { ok: true } | { ok: false; error: string } | { deferral: { reason: string; retryAt: number } } | "try_again";
