import { DurableObject } from "cloudflare:workers";
import { mapItemOf } from "../domain/language/plan";
import type { ClaimedTask } from "../domain/machine";
import { PoolQueue } from "../domain/pools/pool-queue";
import { schedulerFor } from "../workflow/client";
import { taskKey } from "./pool-stub";
import { PoolRows, type PoolTask } from "./pool-rows";
import { MAX_POLL_WAIT_MS, WORKER_SEEN_MS, type PollRequest, type PoolStats, type PoolTaskOffer, type WorkerTask } from "./pool-types";
import { registerPool } from "./pool-index";
import { verifiedBeforeHandOut } from "./pool-verify";

/** How long past its `waitMs` a poll that has tasks goes on claiming more (the contract answers by `waitMs` + 1 s). */
const CLAIMS_PAST_WAIT_MS = 500;

/**
 * One pool of the user's own workers, for one tenant: the attempts offered to it wait here (rows, so a restart
 * loses none) until a worker's poll takes them. A poll with nothing to take waits, woken by the next offer: no
 * polling loop inside the service. Each task goes to exactly one poll: it leaves the queue before the claim is
 * asked of its workflow's object, and that claim (fenced by attempt and pool) is what hands it out; a task whose
 * claim is refused (the attempt moved on, or moved to another pool) is dropped.
 */
export class WorkerPool extends DurableObject<Env> {
  private readonly rows: PoolRows;
  private readonly queue = new PoolQueue();
  private readonly tasks = new Map<string, PoolTask>();
  /** Polls waiting for a task, oldest first: an offer wakes one. */
  private readonly waiting = new Set<() => void>();
  /** The same, by poll id: a poll whose worker went away is woken to answer nothing. */
  private readonly waitingById = new Map<string, () => void>();
  /** Polls whose worker went away (its request was cancelled), by id, with when: they take no task. */
  private readonly abandoned = new Map<string, number>();
  private seq = 0;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.rows = new PoolRows(ctx.storage.sql);
    for (const task of this.rows.tasks()) this.enqueue(task);
  }

  /** An attempt its workflow's object offers; one offered twice (a redelivered outbox row) is kept once. */
  async offer(offer: PoolTaskOffer): Promise<void> {
    await this.registered(offer.tenant, offer.pool);
    const key = taskKey(offer.workflowId, offer.stepId, offer.attempt);
    if (this.tasks.has(key)) return;
    const task: PoolTask = { key, tenant: offer.tenant, workflowId: offer.workflowId, stepId: offer.stepId, attempt: offer.attempt, priority: offer.priority, fairnessKey: offer.fairnessKey, offeredAt: Date.now() };
    this.rows.insert(task, ++this.seq);
    this.enqueue(task);
    this.wakeOne();
  }

  /** The task moved to another pool (a fallback): it is no longer offered here. */
  withdraw(key: string): void {
    this.queue.remove(key);
    this.tasks.delete(key);
    this.rows.delete(key);
  }

  /** A worker's long poll: up to `max` tasks as soon as there are any, or none after `waitMs`. */
  async poll(request: PollRequest): Promise<{ tasks: WorkerTask[] }> {
    const { until } = request;
    this.rows.sawWorker(request.workerId, Date.now());
    await this.registered(request.tenant, request.pool);
    for (let woken = false; ; woken = true) {
      if (this.abandoned.delete(request.pollId)) return { tasks: [] };
      // Woken past its time (a late timer, a busy object): the answer is due now, not after another claim.
      if (woken && Date.now() >= until + CLAIMS_PAST_WAIT_MS) {
        // An offer that woke it goes to the next waiting poll instead.
        if (this.queue.size > 0) this.wakeOne();
        return { tasks: [] };
      }
      const tasks = await this.handOut(request.pool, request.max, until);
      if (tasks.length > 0 || Date.now() >= until) return { tasks };
      await this.offerOrTimeout(until - Date.now(), request.pollId);
    }
  }

  /**
   * The worker of this poll went away (its request was cancelled): the poll takes no task, so none is handed to a
   * worker that is not there (it would wait for its heartbeat deadline). A task already claimed for it is past saving.
   */
  abandon(pollId: string): void {
    const now = Date.now();
    for (const [id, at] of this.abandoned) if (at < now - MAX_POLL_WAIT_MS) this.abandoned.delete(id);
    this.abandoned.set(pollId, now);
    this.waitingById.get(pollId)?.();
  }

  /** A worker reported on a task this pool handed out: it no longer counts as running here. */
  finished(key: string): void {
    this.rows.finished(key);
  }

  stats(pool: string): PoolStats {
    const now = Date.now();
    const oldest = this.queue.oldestOfferedAt();
    return { name: pool, pending: this.queue.size, oldestPendingAgeMs: oldest === undefined ? null : now - oldest, running: this.rows.running(now), workers: this.rows.workers(now - WORKER_SEEN_MS) };
  }

  private enqueue(task: PoolTask): void {
    this.tasks.set(task.key, task);
    this.queue.add(task);
  }

  /**
   * Takes tasks in the queue's order and claims each for the poll; stops at the first object that cannot be reached,
   * and, with something to answer, once the poll is past its time by half the contract's slack (a claim is a call:
   * the answer must not wait for more of them).
   */
  private async handOut(pool: string, max: number, until: number): Promise<WorkerTask[]> {
    const handed: WorkerTask[] = [];
    while (handed.length < max && (handed.length === 0 || Date.now() < until + CLAIMS_PAST_WAIT_MS)) {
      const next = this.queue.take();
      const task = next && this.tasks.get(next.key);
      if (!task) break;
      let reply: Awaited<ReturnType<ReturnType<typeof schedulerFor>["claim"]>>;
      try {
        reply = await schedulerFor(this.env, task.tenant, task.workflowId).claim(task.stepId, task.attempt, pool);
      } catch (error) {
        // Its object is resetting or overloaded: the task waits for the next poll, nothing was claimed.
        console.error(JSON.stringify({ message: "pool could not claim a task; it waits for the next poll", key: task.key, error: String(error) }));
        this.queue.add(task);
        break;
      }
      this.tasks.delete(task.key);
      if (!reply.ok || !("task" in reply)) {
        this.rows.delete(task.key);
        continue;
      }
      if (await verifiedBeforeHandOut(this.env, task.tenant, reply.task)) {
        this.rows.delete(task.key);
        continue;
      }
      this.rows.hand(task.key, reply.task.deadlineAt);
      handed.push(workerTaskOf(reply.task));
    }
    return handed;
  }

  private offerOrTimeout(ms: number, pollId: string): Promise<void> {
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.waiting.delete(done);
        this.waitingById.delete(pollId);
        resolve();
      };
      const timer = setTimeout(done, Math.max(0, ms));
      this.waiting.add(done);
      this.waitingById.set(pollId, done);
    });
  }

  private wakeOne(): void {
    const [first] = this.waiting;
    first?.();
  }

  /** The tenant's index of pools (D1) learns of this one once, so `GET /v1/pools` lists it. */
  private async registered(tenant: string, pool: string): Promise<void> {
    if (this.rows.meta("indexed")) return;
    await registerPool(this.env, tenant, pool);
    this.rows.setMeta("indexed", "1");
  }
}

function workerTaskOf(task: ClaimedTask): WorkerTask {
  const index = mapItemOf(task.stepId)?.index;
  return {
    token: task.token ?? "",
    workflowId: task.workflowId,
    stepId: task.stepId,
    ...(index === undefined ? {} : { index }),
    attempt: task.attempt,
    kind: task.kind,
    input: task.action.type === "worker" ? (task.action.input ?? null) : null,
    heartbeatMs: task.heartbeatMs,
    startToCloseMs: task.startToCloseMs,
    deadlineAt: task.deadlineAt,
    idempotencyKey: task.idempotencyKey,
  };
}
