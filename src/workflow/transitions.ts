import { withDeliveryFaults } from "../dev/fault-bindings";
import { commitPlan, nextDeadlineAt, transition, type ClaimedTask, type EventReply, type SentEvent, type TransitionResult, type WorkflowEvent } from "../domain/machine";
import type { ActedBy } from "../domain/language/operator-commands";
import { isTerminal, type WorkflowState } from "../domain/machine/state";
import { alarmTarget, SupervisorAlarm } from "./alarm";
import { SEND_LEASE_MS } from "./delivery-policy";
import { Outbox } from "./outbox";
import { NOT_FOUND, type CommitOptions } from "./rpc";
import { WorkflowStore } from "./store";
import { EndWaiters } from "./end-waiters";
import type { WebhookReport } from "../webhooks/message";
import type { StepExchange } from "../domain/exchange/exchange";

/**
 * The four beats every call on a workflow's object makes: load through the store, apply the pure transition,
 * persist the state with its effects in one transaction, then deliver the effects and set the alarm.
 */
export class Transitions {
  readonly store: WorkflowStore;
  readonly alarm: SupervisorAlarm;
  readonly outbox: Outbox;
  /** Long polls for the result, woken by the commit that ends the workflow. */
  readonly endWaiters = new EndWaiters();

  constructor(
    ctx: DurableObjectState,
    env: Env,
  ) {
    this.store = new WorkflowStore(ctx.storage);
    this.alarm = new SupervisorAlarm(ctx.storage);
    // A child's start is recorded on this object as an event. With DEV_HOOKS, `abortAfterPersist` resets the object
    // between a commit and its sends (dev/fault-bindings.ts).
    this.outbox = withDeliveryFaults(new Outbox(this.store, env, { record: (event) => this.apply(event) }), env, ctx);
  }

  /** The workflow's state as stored; undefined when this object holds none. */
  state(): WorkflowState | undefined {
    return this.store.load()?.state;
  }

  /** `exchangeOf`: what the attempt the event records sent, from the transition's reply (kept with the commit). */
  async apply<E extends WorkflowEvent>(event: E, options: CommitOptions = {}, exchangeOf?: (reply: ReturnType<typeof transition<E>>["reply"]) => StepExchange | undefined) {
    const loaded = this.store.load();
    if (!loaded) return NOT_FOUND;
    const now = Date.now();
    const result = transition(loaded.state, event, now, Math.random, this.store.items);
    const exchange = exchangeOf?.(result.reply);
    await this.commit(loaded.state, result, now, exchange ? { ...options, exchange } : options);
    return result.reply;
  }

  /** An event (signal), delivered once per `id`: its receipt is written in the same transaction as the delivery. */
  async receiveEvent(sent: SentEvent, by: ActedBy): Promise<EventReply | typeof NOT_FOUND> {
    const loaded = this.store.load();
    if (!loaded) return NOT_FOUND;
    const first = sent.id === undefined ? undefined : this.store.eventReceipt(sent.id);
    if (first) return { ...first, duplicate: true };
    const now = Date.now();
    const result = transition(loaded.state, { type: "EventReceived", ...sent, by }, now, Math.random, this.store.items);
    const eventReceipt = result.reply.ok && sent.id !== undefined ? { id: sent.id, answer: result.reply } : undefined;
    await this.commit(loaded.state, result, now, eventReceipt ? { eventReceipt } : {});
    return result.reply;
  }

  async commit(previous: WorkflowState | undefined, result: TransitionResult & { handOffs?: ClaimedTask[] }, now: number, options: CommitOptions = {}): Promise<void> {
    const { effects, nextDeadlineAt: deadline } = commitPlan(previous, result, now, options.reindex);
    const writes = { now, effects, sendBy: now + SEND_LEASE_MS, announce: this.outbox.announces(result.state.tenant, now) };
    if (result.changed || effects.some((effect) => effect.type === "WriteIndexEntry")) {
      const { requestHash, eventReceipt, claimed, exchange } = options;
      const items = { rows: result.itemRows, pending: result.pendingItems };
      this.store.persist(result.state, result.history, { ...writes, nextDeadlineAt: deadline, requestHash, eventReceipt, claimed, items, exchange });
    } else {
      this.store.appendHistory(result.history, writes);
    }
    // The answer of a woken wait leaves the object only once this commit is stored (the output gate).
    if (isTerminal(result.state.status)) this.endWaiters.wakeAll();
    // Issued with no await after the SQL writes, the alarm commits atomically with them (write coalescing).
    await this.alarm.arm(alarmTarget(deadline, this.outbox.nextAttemptAt(now)));
    const { tenant, id, name } = result.state;
    // A failed delivery waits for the alarm; a lease freed by a send is left to lapse (see SEND_LEASE_MS), but with
    // no deadline (an ended workflow) the alarm was only the deliveries' lease, and goes once nothing is left.
    const delivery = await this.outbox.deliver({ tenant, id, name, ...(options.handOff ? { handOff: options.handOff } : {}), ...(options.byAlarm ? { byAlarm: true } : {}) });
    if (delivery === "deferred" || deadline === undefined) await this.rearm();
  }

  /** The webhook consumer's word on the message this object sent; more history waiting is sent at once. */
  async settleWebhooks(report: WebhookReport): Promise<{ ok: true; applied: boolean } | typeof NOT_FOUND> {
    if (!this.state()) return NOT_FOUND;
    const settled = this.outbox.settleWebhooks(report, Date.now());
    await this.rearm();
    if (settled === "send" && !(await this.outbox.deliverWebhooks())) await this.rearm();
    return { ok: true, applied: settled !== "stale" };
  }

  /** The alarm from what storage holds now: other calls may have committed while a delivery was made. */
  async rearm(): Promise<void> {
    const state = this.state();
    await this.alarm.arm(alarmTarget(state && nextDeadlineAt(state), this.outbox.nextAttemptAt(Date.now())));
  }
}
