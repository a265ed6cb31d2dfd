import { DurableObject } from "cloudflare:workers";
import { QUEUE_LAG_FRESH_MS, type QueueGauge, type QueueLagSample } from "../domain/admission/back-pressure";
import { sumDeliveries, type DeliveryCount } from "../domain/admission/fair-share";
import { METRICS_SERIES_MINUTE_MS } from "../domain/contract";
import { recordLagMinutes } from "./queue-lag-minutes";

/** Consumers report at most this often per isolate and queue; the front door re-reads at most this often per isolate. */
const REPORT_EVERY_MS = 1_000;
const READ_EVERY_MS = 1_000;

/**
 * Who the queues' deliveries were for, over this long: about the back-pressure bound, so the shares describe the
 * backlog the lag measures.
 */
const DELIVERY_WINDOW_MS = 10_000;

/**
 * A minute's worst lag is written to D1 (GET /v1/metrics/series) at most this long after it was sampled: one write
 * per this long while the queues report, none while they do not. Kept in memory until then, as the samples are, so an
 * eviction loses at most this much of the series.
 */
const WRITE_MINUTES_AFTER_MS = 10_000;
/** A written minute is forgotten this long after it ended; a sample that late is older than any report sends. */
const KEEP_WRITTEN_MS = 2 * METRICS_SERIES_MINUTE_MS;

/** One task queue's sample, as its consumer reports it. */
export interface QueueLagReport extends QueueLagSample {
  /** The queue's name (`shepherd-tasks`, `shepherd-tasks-1`, ...). */
  queue: string;
  /** First deliveries per tenant and workflow name since this isolate's previous report. */
  deliveries?: DeliveryCount[];
}

/**
 * The lag of the task queues as their consumers see it, for back-pressure at the front door and for operators.
 * One object for the deployment, holding only each queue's latest sample in memory: it is a gauge that goes stale
 * in seconds, not state, so an eviction that forgets it loses nothing the next reports do not restore.
 */
export class QueueLagMonitor extends DurableObject<Env> {
  private readonly latest = new Map<string, QueueLagSample>();
  /** Reported delivery counts, oldest first, kept for DELIVERY_WINDOW_MS. */
  private deliveries: (DeliveryCount & { at: number })[] = [];
  /** The window ends at the newest report, as the lag's freshness is judged against the newest sample. */
  private newestReportAt = 0;
  /** Each recent minute's worst sample, and whether D1 has it yet. */
  private readonly minutes = new Map<number, { lagMs: number; written: boolean }>();

  async record(report: QueueLagReport): Promise<void> {
    const { queue, lagMs, at } = report;
    const previous = this.latest.get(queue);
    if (!previous || at >= previous.at) this.latest.set(queue, { lagMs, at });
    this.newestReportAt = Math.max(this.newestReportAt, at);
    for (const row of report.deliveries ?? []) this.deliveries.push({ ...row, at });
    this.deliveries = this.deliveries.filter((row) => row.at > this.newestReportAt - DELIVERY_WINDOW_MS);
    if (this.noteMinute(at, lagMs)) await this.armAlarm();
  }

  /** Keeps the sample if it is its minute's worst so far; true when D1 must be told. */
  private noteMinute(at: number, lagMs: number): boolean {
    const minuteAt = Math.floor(at / METRICS_SERIES_MINUTE_MS) * METRICS_SERIES_MINUTE_MS;
    const known = this.minutes.get(minuteAt);
    if (known && known.lagMs >= lagMs) return false;
    this.minutes.set(minuteAt, { lagMs, written: false });
    return true;
  }

  /** Writes the minutes D1 does not have yet; on failure they stay for the next alarm. */
  override async alarm(): Promise<void> {
    const unwritten = [...this.minutes].filter(([, minute]) => !minute.written).map(([minuteAt, { lagMs }]) => ({ minuteAt, lagMs }));
    try {
      await recordLagMinutes(this.env.DB, unwritten);
      // A worse sample that came during the write is written by the next alarm.
      for (const { minuteAt, lagMs } of unwritten) if (this.minutes.get(minuteAt)?.lagMs === lagMs) this.minutes.set(minuteAt, { lagMs, written: true });
    } catch (error) {
      console.error(JSON.stringify({ message: "could not write the queue's lag per minute; the next alarm will", minutes: unwritten.length, error: String(error) }));
    }
    for (const [minuteAt, minute] of this.minutes) if (minute.written && minuteAt < Date.now() - KEEP_WRITTEN_MS) this.minutes.delete(minuteAt);
    await this.armAlarm();
  }

  /** The one place the alarm is set: WRITE_MINUTES_AFTER_MS on while a minute waits for D1, and only then. */
  private async armAlarm(): Promise<void> {
    const waiting = [...this.minutes.values()].some((minute) => !minute.written);
    if (!waiting) return this.ctx.storage.deleteAlarm();
    if ((await this.ctx.storage.getAlarm()) === null) await this.ctx.storage.setAlarm(Date.now() + WRITE_MINUTES_AFTER_MS);
  }

  /**
   * The worst lag among the queues' fresh samples (see `worstFreshSample`), and who the deliveries reported in
   * the last DELIVERY_WINDOW_MS were for: what admission needs.
   */
  gauge(): QueueGauge {
    return { sample: worstFreshSample([...this.latest.values()]), deliveries: sumDeliveries(this.deliveries) };
  }
}

/**
 * The largest lag among the samples taken at most QUEUE_LAG_FRESH_MS before the newest. Starts go to every queue,
 * so the most behind one is what back-pressure must answer to; and a workflow's message is only late once even the
 * slowest queue delivers younger ones, so the lost-message check never sends again what a slow queue still holds.
 * A queue whose sample is that much older than the others' has stopped delivering, which says it is empty.
 */
export function worstFreshSample(samples: QueueLagSample[]): QueueLagSample | undefined {
  if (samples.length === 0) return undefined;
  const newest = Math.max(...samples.map((sample) => sample.at));
  const fresh = samples.filter((sample) => newest - sample.at <= QUEUE_LAG_FRESH_MS);
  return fresh.reduce((worst, sample) => (sample.lagMs > worst.lagMs || (sample.lagMs === worst.lagMs && sample.at > worst.at) ? sample : worst));
}

function monitor(env: Env) {
  return env.QUEUE_LAG.getByName("task-queue");
}

/**
 * wrangler.toml's `max_batch_size` for the task queues. With `max_batch_timeout = 0` a batch holds what was
 * waiting, so a batch with room left means the queue had caught up when it was cut.
 */
const TASK_BATCH_MAX = 10;

/** Per queue: one queue's report must not hold back another's. */
const lastReports = new Map<string, { at: number; caughtUp: boolean }>();
/** Per queue: first deliveries counted since this isolate's last report, sent with the next one. */
const unreported = new Map<string, DeliveryCount[]>();

/**
 * The lag of a delivered batch: the wait of its oldest first delivery (a redelivery's age includes our own
 * retry delays, not the queue's backlog), or 0 when the batch was not full: the queue has caught up, however
 * long its last messages waited (their age says how far behind it *was*; holding starts back for that would
 * leave the agents idle). With it, whose first deliveries these were (see src/domain/admission/fair-share.ts). Reported
 * at most once a second per isolate unless it just caught up or fell behind, and never in the way of the
 * batch: a lost report only makes the gauge a little staler.
 */
export async function reportQueueLag(env: Env, batch: MessageBatch<unknown>, now: number): Promise<void> {
  const firsts = batch.messages.filter((message) => message.attempts <= 1);
  if (firsts.length === 0) return;
  const counted = sumDeliveries([...(unreported.get(batch.queue) ?? []), ...firsts.map(deliveryOf)]);
  unreported.set(batch.queue, counted);
  const caughtUp = batch.messages.length < TASK_BATCH_MAX;
  const lastReport = lastReports.get(batch.queue);
  if (lastReport && lastReport.caughtUp === caughtUp && now - lastReport.at < REPORT_EVERY_MS) return;
  lastReports.set(batch.queue, { at: now, caughtUp });
  unreported.delete(batch.queue);
  const oldest = Math.min(...firsts.map((message) => message.timestamp.getTime()));
  try {
    await monitor(env).record({ queue: batch.queue, lagMs: caughtUp ? 0 : Math.max(0, now - oldest), at: now, deliveries: counted });
  } catch (error) {
    console.error(JSON.stringify({ message: "could not report the queue's lag", error: String(error) }));
  }
}

/** Whose message this is; a body that does not say (malformed, or from before messages named the workflow) counts as nobody's in particular. */
function deliveryOf(message: Message<unknown>): DeliveryCount {
  const body = (typeof message.body === "object" && message.body !== null ? message.body : {}) as { tenant?: unknown; name?: unknown };
  return { tenant: typeof body.tenant === "string" ? body.tenant : "", name: typeof body.name === "string" ? body.name : "", count: 1 };
}

const NO_GAUGE: QueueGauge = { sample: undefined, deliveries: [] };
let cached: { gauge: QueueGauge; readAt: number } | undefined;

/** The queues' gauge, read at most once a second per isolate; empty when there is none or it can't be read. */
export async function currentQueueGauge(env: Env, now: number): Promise<QueueGauge> {
  if (cached && now - cached.readAt < READ_EVERY_MS) return cached.gauge;
  let gauge = NO_GAUGE;
  try {
    gauge = await monitor(env).gauge();
  } catch (error) {
    // The gauge is advice: without it the front door accepts, as it would with an empty queue.
    console.error(JSON.stringify({ message: "could not read the queue's lag", error: String(error) }));
  }
  cached = { gauge, readAt: now };
  return gauge;
}

/** The worst fresh sample of the task queues (see `currentQueueGauge`); undefined when there is none. */
export async function currentQueueLag(env: Env, now: number): Promise<QueueLagSample | undefined> {
  return (await currentQueueGauge(env, now)).sample;
}

/** Tests move the gauge and must see the move at once, not after this isolate's read interval. */
export function forgetQueueLagReads(): void {
  cached = undefined;
  lastReports.clear();
  unreported.clear();
}
