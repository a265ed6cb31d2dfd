import { DurableObject } from "cloudflare:workers";
import { startHandOff } from "../config";
import { faultFires, InjectedFault } from "../dev/faults";
import { indexedDeadlineOf, indexEntryOf, indexNeedsEntry } from "../domain/index-entry";
import { claimEagerly, nextDeadlineAt, queueChecksDue, reportEvent, startWorkflow, transition, unclaimedSince } from "../domain/machine";
import type { EventReply, SentEvent, TransitionResult, WorkflowEvent } from "../domain/machine";
import { currentQueueLag } from "../queue-lag/monitor";
import type { AttemptReport } from "../domain/task-message";
import { commandEvent, type CommandRequest } from "../domain/operator-commands";
import { isTerminal, type WorkflowState } from "../domain/state";
import { scheduleObjectName } from "../schedules/schedule-name";
import { toWorkflowView, type WorkflowView } from "../domain/view";
import { OutboxDelivery } from "./outbox";
import { SEND_LEASE_MS } from "./delivery-policy";
import { NOT_FOUND, type CommitOptions, type StartRequest, type StartResult } from "./rpc";
import { WorkflowStore, type HistoryEvent, type StorageStats } from "./store";
import { SupervisorAlarm } from "./supervisor-alarm";
import { diagnose, SUPERVISOR_DECISIONS, type Diagnosis } from "../domain/diagnosis";
import { WebhookOutbox } from "./webhook-outbox";
import type { WebhookReport } from "../webhooks/message";

/** How many of the supervisor's latest decisions a diagnosis lists. */
const RECENT_DECISIONS = 20;

/**
 * The scheduler and supervisor of one workflow. Every method has the same four beats: load, apply the pure
 * transition, persist it in one synchronous burst, then perform its effects (alarm, queue sends, index).
 */
export class WorkflowScheduler extends DurableObject<Env> {
  private readonly store: WorkflowStore;
  private readonly alarmClock: SupervisorAlarm;
  private readonly outbox: OutboxDelivery;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.store = new WorkflowStore(ctx.storage);
    this.alarmClock = new SupervisorAlarm(ctx.storage);
    this.outbox = new OutboxDelivery(this.store, env, new WebhookOutbox(ctx.storage.sql, this.store, env));
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
    const { tenant, id, plan, input, definition, schedule } = request;
    const result = startWorkflow({ tenant, id, plan, input, now, ...(definition ? { definition } : {}), ...(schedule === undefined ? {} : { schedule }) });
    await this.commit(undefined, result, now, { requestHash: request.requestHash, ...(request.handOff === true ? { handOff: "room" } : {}) });
    return { ok: true, created: true, workflow: toWorkflowView(result.state) };
  }

  describe(): WorkflowView | undefined {
    const loaded = this.store.load();
    return loaded && toWorkflowView(loaded.state);
  }

  history(afterSeq: number, limit: number): HistoryEvent[] {
    return this.store.history(afterSeq, limit);
  }

  /** What each open step waits for, the next deadline, the alarm and the liveness invariant, from storage. */
  async diagnosis(): Promise<({ ok: true } & Diagnosis<HistoryEvent>) | typeof NOT_FOUND> {
    const loaded = this.store.load();
    if (!loaded) return NOT_FOUND;
    const recentDecisions = this.store.latestEvents(SUPERVISOR_DECISIONS, RECENT_DECISIONS);
    const alarmAt = await this.ctx.storage.getAlarm();
    return { ok: true as const, ...diagnose(loaded.state, { alarmAt, recentDecisions }) };
  }

  /** An agent claims a queued attempt; the task comes with the token the remote gets, which expires with it. */
  async claim(stepId: string, attempt: number) {
    const reply = await this.apply({ type: "AttemptClaimed", stepId, attempt }, { claimed: { stepId, attempt } });
    const state = this.store.load()?.state;
    if (!reply.ok || !("task" in reply) || !state) return reply;
    const { token } = await this.outbox.taskMessage(state.tenant, state.id, { stepId, attempt, kind: reply.task.kind }, reply.task.deadlineAt);
    return { ...reply, task: { ...reply.task, token } };
  }

  heartbeat(stepId: string, attempt: number, progress?: { value?: unknown }) {
    return this.apply({ type: "HeartbeatReceived", stepId, attempt, ...(progress ? { progress } : {}) });
  }

  /**
   * An agent's report. `takeFollowUps` > 0 lets that agent take the attempts the report schedules (eager
   * dispatch, see `claimEagerly`); they come back in `followUps`, with their task messages.
   */
  async report(stepId: string, attempt: number, report: AttemptReport, takeFollowUps = 0) {
    const loaded = this.store.load();
    if (!loaded) return NOT_FOUND;
    const now = Date.now();
    const result = claimEagerly(transition(loaded.state, reportEvent(stepId, attempt, report), now), takeFollowUps, now);
    await this.commit(loaded.state, result, now);
    if (result.claimed.length === 0) return result.reply;
    const { tenant, id } = result.state;
    const followUps = await Promise.all(
      result.claimed.map(async (task) => ({ message: await this.outbox.taskMessage(tenant, id, task, task.deadlineAt), task })),
    );
    return { ...result.reply, followUps };
  }

  /** An operator's command; the table (domain/operator-commands.ts) says which event it becomes. */
  command(request: CommandRequest) {
    return this.apply(commandEvent(request));
  }

  /**
   * An event (signal) for the workflow. One sent with an `id` before gets that first answer again and is not
   * delivered twice: the receipt is written in the same transaction as the delivery.
   */
  async sendEvent(sent: SentEvent): Promise<EventReply | typeof NOT_FOUND> {
    const loaded = this.store.load();
    if (!loaded) return NOT_FOUND;
    const first = sent.id === undefined ? undefined : this.store.eventReceipt(sent.id);
    if (first) return { ...first, duplicate: true };
    const now = Date.now();
    const result = transition(loaded.state, { type: "EventReceived", ...sent }, now);
    const eventReceipt = result.reply.ok && sent.id !== undefined ? { id: sent.id, answer: result.reply } : undefined;
    await this.commit(loaded.state, result, now, eventReceipt ? { eventReceipt } : {});
    return result.reply;
  }

  /** The queue gave up delivering this attempt's message (the dead-letter queue's consumer tells us). */
  recordDeadLetter(stepId: string, attempt: number) {
    return this.apply({ type: "TaskDeadLettered", stepId, attempt });
  }

  /** The breaker of `host` closed, or picked this step as its probe: a step parked on it runs again now. */
  releaseParked(stepId: string, host: string) {
    return this.apply({ type: "ParkedStepReleased", stepId, host });
  }

  /** The webhook consumer's word on the message this object sent for `report.afterSeq` (see WebhookOutbox). */
  async reportWebhooks(report: WebhookReport): Promise<{ ok: true; applied: boolean } | typeof NOT_FOUND> {
    const loaded = this.store.load();
    if (!loaded) return NOT_FOUND;
    const deadline = nextDeadlineAt(loaded.state);
    const settled = this.outbox.webhooks.settle(report, Date.now());
    await this.alarmClock.arm(this.alarmTarget(deadline, Date.now()));
    if (settled === "send" && !(await this.outbox.webhooks.deliver())) await this.alarmClock.arm(this.alarmTarget(deadline, Date.now()));
    return { ok: true, applied: settled !== "stale" };
  }

  /**
   * The sweep's safety net: the index says this workflow is overdue, so its alarm may be lost. Acts on what is
   * due, sets the alarm again from the state and refreshes the index entry.
   */
  async wake(): Promise<{ ok: true; status: WorkflowState["status"] } | typeof NOT_FOUND> {
    this.alarmClock.forget();
    const status = await this.supervise({ reindex: true });
    return status ? { ok: true, status } : NOT_FOUND;
  }

  /**
   * Dev only (the route is off without DEV_HOOKS): what the supervisor holds and the storage work this
   * instance did since it was loaded. Counted before it loads anything itself, so asking costs nothing.
   */
  async inspect() {
    const storage: StorageStats & { alarmWrites: number } = { ...this.store.stats, alarmWrites: this.alarmClock.writes };
    const loaded = this.store.load();
    if (!loaded) return NOT_FOUND;
    return {
      id: loaded.state.id,
      status: loaded.state.status,
      alarmAt: await this.ctx.storage.getAlarm(),
      // The object's clock when it read the alarm: lateness is judged by it, not by when the answer arrived.
      readAt: Date.now(),
      nextDeadlineAt: nextDeadlineAt(loaded.state) ?? null,
      indexPending: this.store.pendingIndex() !== undefined,
      unclaimedSince: unclaimedSince(loaded.state) ?? null,
      unsentTasks: this.store.unsentTasks().length,
      storage,
    };
  }

  /** The supervisor. Acts only on what is due, so a repeated or early alarm is harmless. */
  override async alarm(info?: AlarmInvocationInfo): Promise<void> {
    // The alarm that woke us is spent: the next commit must set one again.
    this.alarmClock.forget();
    try {
      if (faultFires(this.env, "alarmThrows", this.store.load()?.state.tenant)) throw new InjectedFault("alarmThrows");
      // Only a workflow has a tick to guard: an object without one is left with no alarm.
      if (this.store.load()) await this.alarmClock.guard();
      // A quiet tenant's retries skip the queue too, so they do not wait behind another tenant's backlog; a busy
      // one's go through it, where they count towards back-pressure (see HandOff).
      await this.supervise(startHandOff(this.env) ? { handOff: "fair-share" } : {});
    } catch (error) {
      await this.alarmClock.rearmAfterFailure(error, info);
    }
  }

  /** The supervisor's tick: acts on what is due. Undefined when there is no workflow. */
  private async supervise(options: CommitOptions = {}): Promise<WorkflowState["status"] | undefined> {
    const before = this.store.load();
    if (!before) return undefined;
    // Whether a queued attempt's message was lost depends on how far behind the queue is: asked only then.
    const queueLag = queueChecksDue(before.state, Date.now()) ? await currentQueueLag(this.env, Date.now()) : undefined;
    // Loaded again: other calls may have changed the state while the lag was read.
    const loaded = this.store.load() ?? before;
    const now = Date.now();
    const result = transition(loaded.state, { type: "DeadlinesReached", ...(queueLag ? { queueLag } : {}) }, now);
    await this.commit(loaded.state, result, now, options);
    return result.state.status;
  }

  private async apply<E extends WorkflowEvent>(event: E, options: CommitOptions = {}) {
    const loaded = this.store.load();
    if (!loaded) return NOT_FOUND;
    const now = Date.now();
    const result = transition(loaded.state, event, now);
    await this.commit(loaded.state, result, now, options);
    return result.reply;
  }

  private async commit(previous: WorkflowState | undefined, result: TransitionResult, now: number, options: CommitOptions = {}): Promise<void> {
    const deadline = nextDeadlineAt(result.state);
    const indexEntry = options.reindex || indexNeedsEntry(previous, result.state, deadline, now) ? indexEntryOf(result.state, indexedDeadlineOf(result.state, deadline, now)) : undefined;
    // The state remembers what the index was given, so the lease is renewed once, not by every commit after.
    if (indexEntry) result.state.indexedDeadlineAt = indexEntry.nextDeadlineAt;
    if (result.changed || indexEntry) {
      const queued = result.effects.map(({ stepId, attempt, kind }) => ({ stepId, attempt, kind }));
      const tasks = queued.length > 0 ? { queued, sendBy: now + SEND_LEASE_MS } : undefined;
      const { requestHash, eventReceipt, claimed } = options;
      this.store.persist(result.state, result.history, { nextDeadlineAt: deadline, now, requestHash, indexEntry, tasks, claimed, eventReceipt });
    } else {
      this.store.appendHistory(result.history, now);
    }
    // Before any await, so the promise to announce this history to webhooks commits with it.
    this.outbox.webhooks.noteAppended(result.state, result.history.length, now);
    // Issued with no await after the SQL writes, the alarm commits atomically with them (write coalescing).
    await this.alarmClock.arm(this.alarmTarget(deadline, now));
    // A crash between persisting and acting: state, outbox and alarm are durable; the sends are not made.
    if (faultFires(this.env, "abortAfterPersist", result.state.tenant)) this.ctx.abort("injected fault: abortAfterPersist");
    // A failed delivery waits for the alarm; a lease freed by a send is left to lapse (see SEND_LEASE_MS), but with
    // no deadline (an ended workflow) the alarm was only the delivery's lease, and goes once nothing is left.
    const delivery = await this.outbox.deliver(result.state.tenant, result.state.id, { handOff: options.handOff });
    if (delivery === "deferred" || deadline === undefined) await this.rearm();
    if (previous && !isTerminal(previous.status) && isTerminal(result.state.status)) await this.tellSchedule(result.state);
  }

  /**
   * A workflow a schedule's fire started tells that schedule when it ends, so a buffered fire starts at once.
   * Best effort: if the notice is lost, the schedule finds the workflow ended at its next fire.
   */
  private async tellSchedule(state: WorkflowState): Promise<void> {
    if (state.schedule === undefined) return;
    try {
      // The namespace's own stub, not the schedule client: that one reaches back to this class through its types.
      await this.env.SCHEDULES.getByName(scheduleObjectName(state.tenant, state.schedule)).workflowEnded(state.id);
    } catch (error) {
      console.error(JSON.stringify({ message: "could not tell the schedule its workflow ended", schedule: state.schedule, workflowId: state.id, error: String(error) }));
    }
  }

  /** The alarm after a delivery, from what storage holds now: other calls may have committed while it was made. */
  private async rearm(): Promise<void> {
    const state = this.store.load()?.state;
    await this.alarmClock.arm(this.alarmTarget(state && nextDeadlineAt(state), Date.now()));
  }

  /** The earliest of the state's deadlines and the outbox's next delivery. */
  private alarmTarget(deadline: number | undefined, now: number): number | undefined {
    const delivery = this.outbox.nextAttemptAt(now);
    if (delivery === undefined) return deadline;
    return deadline === undefined ? delivery : Math.min(deadline, delivery);
  }
}

