import { DurableObject } from "cloudflare:workers";
import type { WorkflowPlan } from "../domain/definition";
import { faultFires, InjectedFault } from "../dev/faults";
import { indexEntryOf, indexNeedsEntry } from "../domain/index-entry";
import {
  claimEagerly,
  nextDeadlineAt,
  startWorkflow,
  transition,
  type Effect,
  type ReportRejection,
  type TransitionResult,
  type WorkflowEvent,
} from "../domain/machine";
import { signTaskToken } from "../domain/task-token";
import type { AttemptReport, TaskMessage } from "../domain/task-message";
import type { WorkflowState } from "../domain/state";
import { toWorkflowView, type WorkflowView } from "../domain/view";
import { upsertIndexEntry } from "../workflow-index/d1-index";
import { WorkflowStore, type HistoryEvent, type StorageStats } from "./store";

export interface StartRequest {
  tenant: string;
  id: string;
  plan: WorkflowPlan;
  input: unknown;
  /** Hash of the start request's body: the same id with another body is a conflict, not a replay. */
  requestHash: string;
}

export type StartResult =
  | { ok: true; created: boolean; workflow: WorkflowView }
  | { ok: false; code: "conflict"; message: string };

/** Queues' `sendBatch` limit: 100 messages. */
const SEND_BATCH_MAX = 100;

/** A failed alarm tries again this soon, by setting itself (see `alarm`). */
const ALARM_FAILURE_RETRY_MS = 1_000;

/** A failed index write is tried again after 1 s, 2 s, 4 s ... at most a minute apart. */
function indexRetryDelayMs(failures: number): number {
  return Math.min(60_000, 1_000 * 2 ** failures);
}

interface CommitOptions {
  requestHash?: string;
  /** Write the index entry even though the status did not change (the sweep woke us). */
  reindex?: boolean;
}

const NOT_FOUND = { ok: false, code: "not_found", message: "workflow not found" } as const;

/**
 * The scheduler and supervisor of one workflow. Every method has the same four beats: load, apply the pure
 * transition, persist it in one synchronous burst, then perform its effects (alarm, queue sends).
 */
export class WorkflowScheduler extends DurableObject<Env> {
  private readonly store: WorkflowStore;
  /** The alarm time this instance last set; only saves redundant writes, storage stays the truth. */
  private armedAt: number | null | undefined;
  /** Alarm writes and deletes by this instance, counted with the SQL work for the benchmarks. */
  private alarmWrites = 0;
  /** The outbox entry being written to D1 right now, if any. */
  private indexWriteInFlight: number | undefined;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.store = new WorkflowStore(ctx.storage);
  }

  async start(request: StartRequest): Promise<StartResult> {
    const existing = this.store.load();
    if (existing) {
      if (existing.requestHash === request.requestHash) {
        return { ok: true, created: false, workflow: toWorkflowView(existing.state) };
      }
      return { ok: false, code: "conflict", message: `workflow "${request.id}" already exists with a different definition or input` };
    }
    const now = Date.now();
    const result = startWorkflow({ tenant: request.tenant, id: request.id, plan: request.plan, input: request.input, now });
    await this.commit(undefined, result, now, { requestHash: request.requestHash });
    return { ok: true, created: true, workflow: toWorkflowView(result.state) };
  }

  describe(): WorkflowView | undefined {
    const loaded = this.store.load();
    return loaded && toWorkflowView(loaded.state);
  }

  history(afterSeq: number, limit: number): HistoryEvent[] {
    return this.store.history(afterSeq, limit);
  }

  claim(stepId: string, attempt: number) {
    return this.apply({ type: "AttemptClaimed", stepId, attempt });
  }

  heartbeat(stepId: string, attempt: number, progress?: { value?: unknown }) {
    return this.apply({ type: "HeartbeatReceived", stepId, attempt, ...(progress ? { progress } : {}) });
  }

  /**
   * An agent's report. `takeFollowUps` > 0 lets that agent take the attempts the report schedules (eager
   * dispatch, see `claimEagerly`); they come back in `followUps`, with their task tokens.
   */
  async report(stepId: string, attempt: number, report: AttemptReport, takeFollowUps = 0) {
    const event: WorkflowEvent =
      report.type === "succeeded"
        ? { type: "AttemptSucceeded", stepId, attempt, output: report.output }
        : report.type === "accepted"
          ? { type: "AttemptAccepted", stepId, attempt }
          : { type: "AttemptFailed", stepId, attempt, error: report.error, ...(report.retryAfterMs === undefined ? {} : { retryAfterMs: report.retryAfterMs }) };
    const loaded = this.store.load();
    if (!loaded) return NOT_FOUND;
    const now = Date.now();
    const result = claimEagerly(transition(loaded.state, event, now) as TransitionResult<{ ok: true } | ReportRejection>, takeFollowUps, now);
    await this.commit(loaded.state, result, now);
    if (result.claimed.length === 0) return result.reply;
    const { tenant, id } = result.state;
    const followUps = await Promise.all(
      result.claimed.map(async (task) => ({ message: await this.taskMessage(tenant, id, task), task })),
    );
    return { ...result.reply, followUps };
  }

  cancel() {
    return this.apply({ type: "CancelRequested" });
  }

  retryStep(stepId: string) {
    return this.apply({ type: "StepRetryRequested", stepId });
  }

  skipStep(stepId: string, output?: unknown) {
    return this.apply({ type: "StepSkipRequested", stepId, output });
  }

  compensate() {
    return this.apply({ type: "CompensationRequested" });
  }

  /** The queue gave up delivering this attempt's message (the dead-letter queue's consumer tells us). */
  recordDeadLetter(stepId: string, attempt: number) {
    return this.apply({ type: "TaskDeadLettered", stepId, attempt });
  }

  /**
   * The sweep's safety net: the index says this workflow is overdue, so its alarm may be lost. Acts on what is
   * due, sets the alarm again from the state and refreshes the index entry.
   */
  async wake(): Promise<{ ok: true; status: WorkflowState["status"] } | typeof NOT_FOUND> {
    const loaded = this.store.load();
    if (!loaded) return NOT_FOUND;
    this.armedAt = undefined;
    const now = Date.now();
    const result = transition(loaded.state, { type: "DeadlinesReached" }, now);
    await this.commit(loaded.state, result, now, { reindex: true });
    return { ok: true, status: result.state.status };
  }

  /**
   * Dev only (the route is off without DEV_HOOKS): what the supervisor holds and the storage work this
   * instance did since it was loaded. Counted before it loads anything itself, so asking costs nothing.
   */
  async inspect(): Promise<{ id: string; status: WorkflowState["status"]; alarmAt: number | null; nextDeadlineAt: number | null; indexPending: boolean; storage: StorageStats & { alarmWrites: number } } | typeof NOT_FOUND> {
    const storage = { ...this.store.stats, alarmWrites: this.alarmWrites };
    const loaded = this.store.load();
    if (!loaded) return NOT_FOUND;
    return {
      id: loaded.state.id,
      status: loaded.state.status,
      alarmAt: await this.ctx.storage.getAlarm(),
      nextDeadlineAt: nextDeadlineAt(loaded.state) ?? null,
      indexPending: this.store.pendingIndex() !== undefined,
      storage,
    };
  }

  /** The supervisor. Acts only on what is due, so a repeated or early alarm is harmless. */
  override async alarm(info?: AlarmInvocationInfo): Promise<void> {
    // The alarm that woke us is spent: the next commit must set one again.
    this.armedAt = undefined;
    try {
      if (faultFires(this.env, "alarmThrows")) throw new InjectedFault("alarmThrows");
      const loaded = this.store.load();
      if (!loaded) return;
      const now = Date.now();
      await this.commit(loaded.state, transition(loaded.state, { type: "DeadlinesReached" }, now), now);
    } catch (error) {
      // The platform would retry a throwing alarm after 2 s, 4 s, 8 s … and stop after six tries; a supervisor
      // that waits that long is late, and one that stops strands the workflow. It sets itself again instead.
      console.error(JSON.stringify({ message: "alarm failed; re-arming", retryCount: info?.retryCount ?? 0, error: String(error) }));
      try {
        await this.ctx.storage.setAlarm(Date.now() + ALARM_FAILURE_RETRY_MS);
      } catch {
        // Storage itself is failing: only now lean on the platform's retries (and, after them, on the sweep).
        throw error;
      }
    }
  }

  private async apply<E extends WorkflowEvent>(event: E) {
    const loaded = this.store.load();
    if (!loaded) return NOT_FOUND;
    const now = Date.now();
    const result = transition(loaded.state, event, now);
    await this.commit(loaded.state, result, now);
    return result.reply;
  }

  private async commit(previous: WorkflowState | undefined, result: TransitionResult, now: number, options: CommitOptions = {}): Promise<void> {
    const deadline = nextDeadlineAt(result.state);
    const indexEntry = options.reindex || indexNeedsEntry(previous, result.state) ? indexEntryOf(result.state, deadline) : undefined;
    if (result.changed) {
      this.store.persist(result.state, result.history, deadline, now, options.requestHash, indexEntry);
    } else {
      this.store.appendHistory(result.history, now);
      if (indexEntry) this.store.queueIndexEntry(indexEntry, now);
    }
    // Issued with no await after the SQL writes, the alarm commits atomically with them (write coalescing).
    await this.armAlarm(this.alarmTarget(deadline, now));
    // A crash between persisting and acting: state and alarm are durable, the sends and index write are not.
    if (faultFires(this.env, "abortAfterPersist")) this.ctx.abort("injected fault: abortAfterPersist");
    await this.enqueue(result.state.tenant, result.state.id, result.effects);
    await this.flushIndex(deadline);
  }

  /**
   * The earliest of the state's deadlines and a deferred index write. An index write due now is left out:
   * this same commit is about to make it, and arms the alarm for it only if it fails.
   */
  private alarmTarget(deadline: number | undefined, now: number): number | undefined {
    const pending = this.store.pendingIndex();
    if (!pending || pending.nextAttemptAt <= now) return deadline;
    return deadline === undefined ? pending.nextAttemptAt : Math.min(deadline, pending.nextAttemptAt);
  }

  /**
   * Sends the outbox's index entry to D1. A failure loses nothing: the entry stays in the outbox and the
   * alarm tries again with backoff, so D1 being down delays the index but never drops a status.
   */
  private async flushIndex(deadline: number | undefined): Promise<void> {
    const pending = this.store.pendingIndex();
    if (!pending || pending.nextAttemptAt > Date.now()) return;
    // One write per entry at a time: calls that arrive meanwhile neither repeat it nor wait for it.
    if (this.indexWriteInFlight === pending.seq) return;
    this.indexWriteInFlight = pending.seq;
    try {
      if (faultFires(this.env, "indexWriteFails")) throw new InjectedFault("indexWriteFails");
      await upsertIndexEntry(this.env.DB, pending.entry);
      this.store.markIndexed(pending.seq);
    } catch (error) {
      const retryAt = Date.now() + indexRetryDelayMs(pending.attempts);
      console.error(JSON.stringify({ message: "index write failed; the alarm will retry", workflowId: pending.entry.id, retryAt, error: String(error) }));
      this.store.deferIndex(pending.seq, retryAt);
      await this.armAlarm(this.alarmTarget(deadline, Date.now()));
    } finally {
      if (this.indexWriteInFlight === pending.seq) this.indexWriteInFlight = undefined;
    }
  }

  /**
   * One alarm, never later than the earliest deadline; none when nothing is pending. Moving it earlier is done
   * at once; moving it later waits until it fires: that alarm finds nothing due and sets the real deadline.
   * Heartbeats and each next step only ever push the deadline later, so most commits write no alarm at all.
   */
  private async armAlarm(deadline: number | undefined): Promise<void> {
    const target = deadline ?? null;
    if (this.armedAt === target) return;
    if (target !== null && this.armedAt !== undefined && this.armedAt !== null && this.armedAt <= target) return;
    // Noted before the await, so a transition that runs meanwhile compares against what is being set.
    this.armedAt = target;
    this.alarmWrites += 1;
    try {
      if (target === null) await this.ctx.storage.deleteAlarm();
      else await this.ctx.storage.setAlarm(target);
    } catch (error) {
      this.armedAt = undefined;
      throw error;
    }
  }

  /**
   * Runs after the state is durable. A failed send loses nothing: the attempt stays scheduled and its
   * schedule-to-start deadline makes the supervisor retry it.
   */
  /** The message naming one attempt, with its signed task token. */
  private async taskMessage(tenant: string, workflowId: string, attempt: { stepId: string; attempt: number; kind: TaskMessage["kind"] }): Promise<TaskMessage> {
    const claims = { tenant, workflowId, stepId: attempt.stepId, attempt: attempt.attempt };
    return { ...claims, kind: attempt.kind, token: await signTaskToken(claims, this.env.TASK_TOKEN_SECRET) };
  }

  private async enqueue(tenant: string, workflowId: string, effects: Effect[]): Promise<void> {
    if (effects.length === 0) return;
    try {
      const messages = await Promise.all(effects.map(async (effect) => ({ body: await this.taskMessage(tenant, workflowId, effect) })));
      if (faultFires(this.env, "enqueueFails")) throw new InjectedFault("enqueueFails");
      // A batch takes at most 100 messages (and 256 KB; a task message is under 1.2 KB): a wide fan-out is chunked.
      for (let i = 0; i < messages.length; i += SEND_BATCH_MAX) await this.env.TASKS.sendBatch(messages.slice(i, i + SEND_BATCH_MAX));
    } catch (error) {
      console.error(JSON.stringify({ message: "enqueue failed; the schedule-to-start deadline will retry", workflowId, error: String(error) }));
    }
  }
}
