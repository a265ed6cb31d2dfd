import { DurableObject } from "cloudflare:workers";
import type { QueueLagSample } from "../domain/back-pressure";

/** Consumers report at most this often per isolate; the front door re-reads at most this often per isolate. */
const REPORT_EVERY_MS = 1_000;
const READ_EVERY_MS = 1_000;

/**
 * The lag of the task queue as its consumers see it, for back-pressure at the front door and for operators.
 * One object for the deployment, holding only the latest sample in memory: it is a gauge that goes stale in
 * seconds, not state, so an eviction that forgets it loses nothing the next report does not restore.
 */
export class QueueLagMonitor extends DurableObject<Env> {
  private latest: QueueLagSample | undefined;

  record(sample: QueueLagSample): void {
    if (!this.latest || sample.at >= this.latest.at) this.latest = sample;
  }

  read(): QueueLagSample | null {
    return this.latest ?? null;
  }
}

function monitor(env: Env) {
  return env.QUEUE_LAG.getByName("task-queue");
}

/**
 * wrangler.toml's `max_batch_size` for `shepherd-tasks`. With `max_batch_timeout = 0` a batch holds what was
 * waiting, so a batch with room left means the queue had caught up when it was cut.
 */
const TASK_BATCH_MAX = 10;

let lastReport: { at: number; caughtUp: boolean } | undefined;

/**
 * The lag of a delivered batch: the wait of its oldest first delivery (a redelivery's age includes our own
 * retry delays, not the queue's backlog), or 0 when the batch was not full: the queue has caught up, however
 * long its last messages waited (their age says how far behind it *was*; holding starts back for that would
 * leave the agents idle). Reported at most once a second per isolate unless it just caught up or fell behind,
 * and never in the way of the batch: a lost report only makes the gauge a little staler.
 */
export async function reportQueueLag(env: Env, batch: MessageBatch<unknown>, now: number): Promise<void> {
  const firsts = batch.messages.filter((message) => message.attempts <= 1);
  if (firsts.length === 0) return;
  const caughtUp = batch.messages.length < TASK_BATCH_MAX;
  if (lastReport && lastReport.caughtUp === caughtUp && now - lastReport.at < REPORT_EVERY_MS) return;
  lastReport = { at: now, caughtUp };
  const oldest = Math.min(...firsts.map((message) => message.timestamp.getTime()));
  try {
    await monitor(env).record({ lagMs: caughtUp ? 0 : Math.max(0, now - oldest), at: now });
  } catch (error) {
    console.error(JSON.stringify({ message: "could not report the queue's lag", error: String(error) }));
  }
}

let cached: { sample: QueueLagSample | undefined; readAt: number } | undefined;

/** The latest sample, read at most once a second per isolate; undefined when there is none or it can't be read. */
export async function currentQueueLag(env: Env, now: number): Promise<QueueLagSample | undefined> {
  if (cached && now - cached.readAt < READ_EVERY_MS) return cached.sample;
  let sample: QueueLagSample | undefined;
  try {
    sample = (await monitor(env).read()) ?? undefined;
  } catch (error) {
    // The gauge is advice: without it the front door accepts, as it would with an empty queue.
    console.error(JSON.stringify({ message: "could not read the queue's lag", error: String(error) }));
  }
  cached = { sample, readAt: now };
  return sample;
}

/** Tests move the gauge and must see the move at once, not after this isolate's read interval. */
export function forgetQueueLagReads(): void {
  cached = undefined;
  lastReport = undefined;
}
