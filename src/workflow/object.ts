import { DurableObject } from "cloudflare:workers";
import { attemptSends, claimEagerly, reportEvent, startWorkflow, transition, type ChildEndNotice, type EventReply, type MapItemStatus, type SentEvent } from "../domain/machine";
import type { AttemptReport } from "../domain/machine/task-message";
import { handedOutExchange } from "../domain/exchange/exchange";
import { commandEvent, type ActedBy, type CommandRequest } from "../domain/language/operator-commands";
import type { WorkflowState } from "../domain/machine/state";
import { toWorkflowView, type WorkflowView } from "../domain/machine/view";
import { reservationKey, reserveAgentHosts } from "../agents/host-reservations";
import { withInjectedFaults } from "../dev/fault-bindings";
import { runAlarm, supervise } from "../supervisor/tick";
import type { WebhookReport } from "../webhooks/message";
import { taskMessage } from "./outbox";
import { attemptOfStep, awaitResult, describeObject, diagnoseObject, inspectObject, mapItemsPage } from "./reads";
import { lateStart, NOT_FOUND, startArgsOf, startedBefore, type StartRequest, type StartResult } from "./rpc";
import type { HistoryEvent } from "./store";
import { Transitions } from "./transitions";

/**
 * The scheduler and supervisor of one workflow. Every method has the same four beats (see Transitions): load,
 * apply the pure transition, persist it with its effects in one synchronous burst, then deliver the effects.
 */
export class WorkflowScheduler extends DurableObject<Env> {
  private readonly transitions: Transitions;
  private readonly store; // also what tests reach through `runInDurableObject`

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, withInjectedFaults(env, ctx));
    this.transitions = new Transitions(ctx, this.env);
    this.store = this.transitions.store;
  }

  /**
   * A new workflow. With `handOff`, its first attempts' hosts are asked for room first: those that have it get
   * their attempt claimed in the start's own transition and handed over as an effect (see reserveAgentHosts).
   */
  async start(request: StartRequest): Promise<StartResult> {
    const existing = startedBefore(this.store.load(), request);
    if (existing) return existing;
    const now = Date.now();
    // After the lookup: a start repeated once its time has passed still answers the workflow it started.
    const late = lateStart(request, now);
    if (late) return late;
    const started = startWorkflow(startArgsOf(request, now));
    const reserved = request.handOff === true ? await reserveAgentHosts(this.env, started.state, attemptSends(started.effects)) : new Set<string>();
    // Another start of this id may have committed while the hosts answered.
    const raced = startedBefore(this.store.load(), request);
    if (raced) return raced;
    const result = claimEagerly(started, reserved.size, Date.now(), (attempt) => reserved.has(reservationKey(attempt)));
    await this.transitions.commit(undefined, { ...result, handOffs: result.claimed }, now, { requestHash: request.requestHash });
    return { ok: true, created: true, workflow: toWorkflowView(result.state) };
  }

  describe(): WorkflowView | undefined {
    return describeObject(this.transitions);
  }

  history(afterSeq: number, limit: number): HistoryEvent[] {
    return this.store.history(afterSeq, limit);
  }

  /**
   * The result once the workflow has ended (`ended`); until then the call waits, until `until` at the latest, woken
   * by the commit that ends the workflow rather than by polling.
   */
  result(wait: { waitId: string; until: number }) {
    return awaitResult(this.transitions, wait);
  }

  /** The caller of a result's wait went away: the wait ends, so nothing is held for it. */
  abandonResult(waitId: string): void {
    this.transitions.endWaiters.abandon(waitId);
  }

  /** A page of a map step's items; undefined when there is no such map. */
  mapItems(stepId: string, query: { status?: MapItemStatus; cursor?: number; limit: number }) {
    return mapItemsPage(this.transitions, stepId, query);
  }

  /** One attempt of a step, with what it sent and what came back. */
  attempt(stepId: string, n: number) {
    return attemptOfStep(this.transitions, stepId, n);
  }

  /** What each open step waits for, the next deadline, the alarm and the liveness invariant, from storage. */
  diagnosis() {
    return diagnoseObject(this.transitions, this.ctx.storage);
  }

  /**
   * An agent claims a queued attempt, or a pool a worker task (`pool`: the one it waits in); the task comes with
   * the token the remote or worker gets, which expires with it.
   */
  async claim(stepId: string, attempt: number, pool?: string) {
    // A worker's task is its attempt's request, kept by the claim's commit (which writes the step's row anyway).
    const reply = await this.transitions.apply({ type: "AttemptClaimed", stepId, attempt, ...(pool === undefined ? {} : { pool }) }, { claimed: { stepId, attempt } },
      pool === undefined ? undefined : (claim) => (claim.ok && "task" in claim ? handedOutExchange(claim.task, pool) : undefined));
    const state = this.transitions.state();
    if (!reply.ok || !("task" in reply) || !state) return reply;
    const { token } = await taskMessage(this.env, state, { stepId, attempt, kind: reply.task.kind }, reply.task.deadlineAt, pool);
    return { ...reply, task: { ...reply.task, token } };
  }

  heartbeat(stepId: string, attempt: number, progress?: { value?: unknown }) {
    return this.transitions.apply({ type: "HeartbeatReceived", stepId, attempt, ...(progress ? { progress } : {}) });
  }

  /**
   * An agent's report. `takeFollowUps` > 0 lets that agent take the attempts the report schedules (eager
   * dispatch, see `claimEagerly`); they come back in `followUps`, with their task messages.
   */
  async report(stepId: string, attempt: number, report: AttemptReport, takeFollowUps = 0) {
    const loaded = this.store.load();
    if (!loaded) return NOT_FOUND;
    const now = Date.now();
    const result = claimEagerly(transition(loaded.state, reportEvent(stepId, attempt, report), now, Math.random, this.store.items), takeFollowUps, now, undefined, this.store.items);
    await this.transitions.commit(loaded.state, result, now, report.exchange ? { exchange: { stepId, attempt, exchange: report.exchange } } : {});
    if (result.claimed.length === 0) return result.reply;
    const followUps = await Promise.all(result.claimed.map(async (task) => ({ message: await taskMessage(this.env, result.state, task, task.deadlineAt), task })));
    return { ...result.reply, followUps };
  }

  /** An operator's command; the table (domain/operator-commands.ts) says which event it becomes. */
  command(request: CommandRequest) {
    return this.transitions.apply(commandEvent(request));
  }

  /**
   * An event (signal) for the workflow. One sent with an `id` before gets that first answer again and is not
   * delivered twice: the receipt is written in the same transaction as the delivery.
   */
  sendEvent(sent: SentEvent, by: ActedBy): Promise<EventReply | typeof NOT_FOUND> {
    return this.transitions.receiveEvent(sent, by);
  }

  /** The queue gave up delivering this attempt's message (the dead-letter queue's consumer tells us). */
  recordDeadLetter(stepId: string, attempt: number) {
    return this.transitions.apply({ type: "TaskDeadLettered", stepId, attempt });
  }

  /** The breaker of `host` closed, or picked this step as its probe: a step parked on it runs again now. */
  releaseParked(stepId: string, host: string) {
    return this.transitions.apply({ type: "ParkedStepReleased", stepId, host });
  }

  /** A child workflow's object says it ended (its outbox's notice: applied once, fenced by the child's id). */
  childEnded(notice: ChildEndNotice) {
    return this.transitions.apply({ type: "ChildWorkflowEnded", ...notice });
  }

  /**
   * The sweep's safety net: the index says this workflow is overdue, so its alarm may be lost. Acts on what is
   * due, sets the alarm again from the state and refreshes the index entry.
   */
  async wake(): Promise<{ ok: true; status: WorkflowState["status"] } | typeof NOT_FOUND> {
    this.transitions.alarm.forget();
    const status = await supervise(this.transitions, this.env, { reindex: true });
    return status ? { ok: true, status } : NOT_FOUND;
  }

  /** The webhook consumer's word on the message this object sent for `report.afterSeq` (see WebhookDelivery). */
  reportWebhooks(report: WebhookReport) {
    return this.transitions.settleWebhooks(report);
  }

  /** Dev only (the route is off without DEV_HOOKS): what the supervisor holds and the storage work of this instance. */
  inspect() {
    return inspectObject(this.transitions, this.ctx.storage);
  }

  /** The supervisor (see supervisor/tick.ts). */
  override async alarm(info?: AlarmInvocationInfo): Promise<void> {
    await runAlarm(this.transitions, this.env, info);
  }
}
