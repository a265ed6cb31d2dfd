import { agentHostFor, type HandOff } from "../agents/host-shard";
import { faultFires, InjectedFault } from "../dev/faults";
import { backoffMs } from "../domain/backoff";
import type { TaskMessage } from "../domain/task-message";
import { signTaskToken, TASK_TOKEN_GRACE_MS } from "../domain/task-token";
import { upsertIndexEntry } from "../workflow-index/d1-index";
import { indexDbFor } from "../workflow-index/index-shards";
import type { QueuedTask, WorkflowStore } from "./store";
import type { WebhookOutbox } from "./deliveries/webhooks";
import { SEND_LEASE_MS, SEND_RETRY } from "./delivery-policy";
import { taskQueueFor } from "./task-queues";

/** Queues' `sendBatch` limit: 100 messages (and 256 KB; a task message is under 1.2 KB). */
const SEND_BATCH_MAX = 100;

const INDEX_RETRY = { initialMs: 1_000, maxMs: 60_000 };

/** How many of a start's first attempts its object hands to agent hosts itself; the rest go through the queue. */
const HAND_OFF_MAX = 4;

/**
 * Delivers what commits left in the object's outbox: task messages to the queue and the index entry to D1.
 * Both were written in the same transaction as the state they belong to, so a crash or a failed call loses
 * nothing: the entry stays, and the alarm tries again with backoff. One delivery of each entry at a time:
 * calls that arrive meanwhile neither repeat it nor wait for it.
 */
export class OutboxDelivery {
  private readonly sending = new Set<number>();
  /** The index write under way: its entry, and when it began (one unanswered for a lease counts as lost). */
  private indexWrite: { seq: number; startedAt: number } | undefined;

  constructor(
    private readonly store: WorkflowStore,
    private readonly env: Env,
    /** The webhooks' cursor row: its own module, since its delivery is a conversation with a consumer. */
    readonly webhooks: WebhookOutbox,
  ) {}

  /**
   * When the alarm must deliver something next. A task message due now is left out: the commit sends every unsent
   * one now. An index entry due now is written by the delivery that follows, but the alarm stays a lease on
   * (as for the webhooks' cursor): should that write never be answered (the instance evicted or reset before D1
   * answers, its call dropped), the alarm writes the entry, where nothing else would until the sweep.
   */
  nextAttemptAt(now: number): number | undefined {
    const times = this.store.unsentTasks().map((task) => task.nextAttemptAt);
    const index = this.store.pendingIndex();
    if (index) times.push(index.nextAttemptAt <= now ? now + SEND_LEASE_MS : index.nextAttemptAt);
    const webhooks = this.webhooks.nextAttemptAt(now);
    if (webhooks !== undefined) times.push(webhooks);
    const later = times.filter((at) => at > now);
    return later.length === 0 ? undefined : Math.min(...later);
  }

  /**
   * Delivers what is pending; "deferred" when something failed and now waits for the alarm (or moved its time).
   * `handOff` (a start's commit, the supervisor's tick): attempts go straight to an agent host that takes them.
   */
  async deliver(tenant: string, workflowId: string, options: { handOff?: HandOff } = {}): Promise<"delivered" | "deferred"> {
    if (options.handOff) await this.handOffTasks(tenant, workflowId, options.handOff);
    const sent = await this.sendTasks(tenant, workflowId);
    const indexed = await this.flushIndex();
    const announced = await this.webhooks.deliver();
    return sent && indexed && announced ? "delivered" : "deferred";
  }

  /**
   * The message naming one attempt, with its signed task token. A claimed attempt's token expires a grace period
   * after its start-to-close deadline; a queued one's cannot know its deadline yet and never leaves Shepherd.
   */
  async taskMessage(tenant: string, workflowId: string, task: QueuedTask, claimedDeadlineAt?: number): Promise<TaskMessage> {
    const claims = { tenant, workflowId, stepId: task.stepId, attempt: task.attempt };
    const expiry = claimedDeadlineAt === undefined ? {} : { expiresAt: claimedDeadlineAt + TASK_TOKEN_GRACE_MS };
    // The workflow's name rides along (unsigned: it decides nothing but whose backlog this is, for fair shares).
    const name = this.store.load()?.state.name;
    const token = await signTaskToken({ ...claims, ...expiry }, this.env.TASK_TOKEN_SECRET);
    return { ...claims, ...(name === undefined ? {} : { name }), kind: task.kind, token };
  }

  /**
   * A start's first attempts without the queue hop (what Temporal calls eager workflow start): the object hands
   * each message to its agent host, whose claim settles the message's outbox row in the claim's own commit. A
   * host without room, a refusal or a failed call leaves the row unsent, and `sendTasks` enqueues it as usual;
   * should this instance die first, the row's lease has the alarm send it. Nothing is lost and no attempt is
   * spent: the attempt is claimed by the host exactly as from the queue.
   */
  private async handOffTasks(tenant: string, workflowId: string, handOff: HandOff): Promise<void> {
    const rows = this.store.unsentTasks().filter((row) => !this.sending.has(row.seq)).slice(0, HAND_OFF_MAX);
    for (const row of rows) this.sending.add(row.seq);
    try {
      await Promise.all(
        rows.map(async (row) => {
          const message = await this.taskMessage(tenant, workflowId, row.task);
          await agentHostFor(this.env, message)
            .take(message, { handOff })
            .catch((error: unknown) => console.error(JSON.stringify({ message: "hand-off failed; sending through the queue", workflowId, error: String(error) })));
        }),
      );
    } finally {
      for (const row of rows) this.sending.delete(row.seq);
    }
  }

  /** Sends every unsent task message not already on its way; false when the queue refused. */
  private async sendTasks(tenant: string, workflowId: string): Promise<boolean> {
    const unsent = this.store.unsentTasks().filter((task) => !this.sending.has(task.seq));
    if (unsent.length === 0) return true;
    for (const task of unsent) this.sending.add(task.seq);
    let accepted = 0;
    try {
      const messages = await Promise.all(unsent.map(async (row) => ({ body: await this.taskMessage(tenant, workflowId, row.task) })));
      if (faultFires(this.env, "enqueueFails", tenant)) throw new InjectedFault("enqueueFails");
      const queue = taskQueueFor(this.env, workflowId);
      for (; accepted < messages.length; accepted += SEND_BATCH_MAX) {
        await queue.sendBatch(messages.slice(accepted, accepted + SEND_BATCH_MAX));
        this.store.markTasksSent(unsent.slice(accepted, accepted + SEND_BATCH_MAX).map((row) => row.seq));
      }
      return true;
    } catch (error) {
      const left = unsent.slice(accepted);
      const retryAt = Date.now() + backoffMs(Math.min(...left.map((row) => row.attempts)), SEND_RETRY);
      console.error(JSON.stringify({ message: "enqueue failed; the alarm will send again", workflowId, unsent: left.length, retryAt, error: String(error) }));
      this.store.deferTasks(left.map((row) => row.seq), retryAt);
      return false;
    } finally {
      for (const task of unsent) this.sending.delete(task.seq);
    }
  }

  /**
   * Sends the outbox's index entry to D1; false when it failed (the entry waits for the alarm). A write of the
   * entry already under way is not repeated, unless it has gone a lease unanswered: then the alarm armed for it
   * has come, and it is written again (the upsert takes the same version twice).
   */
  private async flushIndex(): Promise<boolean> {
    const pending = this.store.pendingIndex();
    const now = Date.now();
    if (!pending || pending.nextAttemptAt > now || this.indexWriteUnderWay(pending.seq, now)) return true;
    const write = { seq: pending.seq, startedAt: now };
    this.indexWrite = write;
    try {
      if (faultFires(this.env, "indexWriteFails", pending.entry.tenant)) throw new InjectedFault("indexWriteFails");
      await upsertIndexEntry(indexDbFor(this.env, pending.entry.tenant, pending.entry.id), pending.entry);
      this.store.markIndexed(pending.seq);
      return true;
    } catch (error) {
      const retryAt = Date.now() + backoffMs(pending.attempts, INDEX_RETRY);
      console.error(JSON.stringify({ message: "index write failed; the alarm will retry", workflowId: pending.entry.id, retryAt, error: String(error) }));
      this.store.deferIndex(pending.seq, retryAt);
      return false;
    } finally {
      if (this.indexWrite === write) this.indexWrite = undefined;
    }
  }

  private indexWriteUnderWay(seq: number, now: number): boolean {
    return this.indexWrite?.seq === seq && now - this.indexWrite.startedAt < SEND_LEASE_MS;
  }
}
