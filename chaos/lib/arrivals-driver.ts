// The arrivals phase's driver: sends each door's lead with the soak (a few hundred ms apart, batches a few seconds
// apart) and holds the rest back until the restarter is about to kill Shepherd (`beforeKill`): then the delayed starts
// meant to fall due in the outage or after it, the batch to be repeated and half the start messages are sent, and
// what must follow the restart (the batch's repeat, each message's second copy) waits until Shepherd is back. Without
// a restart, or once the regular workload is over (`windDown`), nothing is held. Every workflow is followed to its end
// (by a long poll of its result for some, by reading it for the rest); then the phase waits for their end notices.
import { sleep, within } from "../../scripts/lib/async.ts";
import type { StartDeadLetter } from "./api-shapes.ts";
import { RESULT_WAIT_MS, startMessage } from "./arrivals.ts";
import type { ArrivalsPlan, ArrivalWave, BatchPlan, DelayedStart, QueuedStart } from "./arrivals.ts";
import { longPoll, queueUntilTaken, sendBatch } from "./arrival-sends.ts";
import type { BatchSend, LongPollRecord, QueuedCopy } from "./arrival-sends.ts";
import type { ShepherdClient } from "./client.ts";
import { followToEnd } from "./follow.ts";
import type { NoticeRecord } from "./notices.ts";
import { newResult } from "./results.ts";
import type { WorkflowResult } from "./results.ts";
import { heldGate } from "./arrivals-gate.ts";
import type { HeldGate } from "./arrivals-gate.ts";
import { rotation } from "./rotation.ts";
import { startUntilAccepted } from "./starts.ts";

/** Readings of a workflow not long-polled: slow, since a delayed one waits for seconds and the phase's load stays small. */
const POLL_MIN_MS = 1_000;
const POLL_MAX_MS = 3_000;
/** Between two lead sends of one door: the phase's own load stays a trickle beside the burst. */
const LEAD_PACE_MS = 300;
/** Between two lead batches. */
const BATCH_PACE_MS = 3_000;
/** A lead message's second copy follows its first by this much. */
const SECOND_COPY_AFTER_MS = 1_500;
/** How often the phase looks whether every notice has come. */
const NOTICE_LOOK_MS = 500;
/** The kill waits at most this long for the sends made just before it to be answered. */
const KILL_SENDS_MS = 2_000;
/** A queued start whose workflow no reading found this long after its second copy was taken is given up. */
const UNSEEN_GIVE_UP_MS = 90_000;
/**
 * Once every workflow has ended, their notices have this long to arrive: a notice whose post the kill cut is posted
 * again by the alarm a send lease (30 s) after that post began, and a failed try 5 s on.
 */
const NOTICE_WAIT_MS = 45_000;

export interface ArrivalsDrive {
  client: ShepherdClient;
  plan: ArrivalsPlan;
  /** Whether a restart is planned: without one nothing is held back. */
  restart: boolean;
  /** Whether the soak's restart is over (true at once without one). */
  restartOver: () => boolean;
  deadline: number;
  /** The end notices the remote has received so far. */
  notices: () => NoticeRecord[];
}

/** One delayed start: when it was first sent and when it was accepted (epoch ms). */
export interface DelayedRecord {
  id: string;
  delayMs: number;
  wave: ArrivalWave;
  sentAt: number | null;
  answeredAt: number | null;
}

/** One queued start: both copies of its message. */
export interface QueuedRecord {
  id: string;
  wave: ArrivalWave;
  copies: QueuedCopy[];
}

export interface ArrivalsRun {
  results: WorkflowResult[];
  delayed: DelayedRecord[];
  batches: BatchSend[];
  queued: QueuedRecord[];
  longPolls: LongPollRecord[];
  notices: NoticeRecord[];
  /** The bad batch item's id read at the end: 404, nothing was made of it. */
  badItems: { id: string; status: number }[];
  /** Dead letters of the STARTS queue naming one of the phase's workflows (null: the list could not be read). */
  deadLetters: StartDeadLetter[] | null;
  /** When the held sends went, and whether at the kill. */
  held: { releasedAt: number | null; atKill: boolean };
}

export interface ArrivalsPhase {
  done: Promise<ArrivalsRun>;
  openSample: (n: number) => string[];
  /** The restarter's hook: sends what the kill should find in flight, and says what. */
  beforeKill: () => Promise<string | null>;
  /** The regular workload is over: nothing is held any more. */
  windDown: () => void;
}

const IDLE: ArrivalsPhase = {
  done: Promise.resolve({ results: [], delayed: [], batches: [], queued: [], longPolls: [], notices: [], badItems: [], deadLetters: [], held: { releasedAt: null, atKill: false } }),
  openSample: () => [],
  beforeKill: async () => null,
  windDown: () => {},
};

/** What the phase's runs share: the client, the gate of the held sends, and the followers. */
interface Ctx {
  client: ShepherdClient;
  deadline: number;
  gate: HeldGate;
  /** The sends made at the kill, which it waits for (bounded). */
  killSends: Promise<unknown>[];
  follow: (result: WorkflowResult, giveUp?: () => boolean) => Promise<void>;
}

export function driveArrivals({ client, plan, restart, restartOver, deadline, notices }: ArrivalsDrive): ArrivalsPhase {
  if (plan.workflows.length === 0) return IDLE;
  const open = new Set<string>();
  const longPolls: LongPollRecord[] = [];
  const gate = heldGate(restartOver, deadline);
  if (!restart) gate.release(false);
  const follow = async (result: WorkflowResult, giveUp?: () => boolean): Promise<void> => {
    open.add(result.id);
    if (plan.longPolled.has(result.id)) longPolls.push(await longPoll(client, result, { waitMs: RESULT_WAIT_MS, deadline, ...(giveUp ? { giveUp } : {}) }));
    else await followToEnd(client, result, deadline, { minMs: POLL_MIN_MS, maxMs: POLL_MAX_MS, ...(giveUp ? { giveUp } : {}) });
    open.delete(result.id);
  };
  const ctx: Ctx = { client, deadline, gate, killSends: [], follow };
  const lead = { delayed: 0, queued: 0 };
  const pace = (wave: ArrivalWave, door: keyof typeof lead): Promise<void> => (wave === "lead" ? sleep(lead[door]++ * LEAD_PACE_MS) : gate.released);
  const delayed = Promise.all(plan.delayed.map((d) => runDelayed(ctx, d, pace(d.wave, "delayed"))));
  const batches = Promise.all(plan.batches.map((b) => runBatch(ctx, b)));
  const queued = Promise.all(plan.queued.map((q) => runQueued(ctx, q, pace(q.wave, "queued"))));
  const done = Promise.all([delayed, batches, queued]).then((ran) => endOfPhase(ctx, plan, ran, { longPolls, notices }));
  const sample = rotation();
  return {
    done,
    openSample: (n) => sample([...open], n),
    async beforeKill() {
      if (gate.releasedAt() !== null) return null;
      gate.release(true);
      // The held runs take their turn once `released` resolves: let them send, then wait for their answers.
      await sleep(0);
      const answered = await within(Promise.allSettled(ctx.killSends), KILL_SENDS_MS, null);
      const delayedAtKill = plan.delayed.filter((d) => d.wave === "kill").length;
      const queuedAtKill = plan.queued.filter((q) => q.wave === "kill").length;
      return `${delayedAtKill} delayed starts, a batch and ${queuedAtKill} start messages sent just before (${answered ? "all answered" : "not all answered"})`;
    },
    windDown: () => gate.release(false),
  };
}

type Ran = [Awaited<ReturnType<typeof runDelayed>>[], Awaited<ReturnType<typeof runBatch>>[], Awaited<ReturnType<typeof runQueued>>[]];

/** Every run over: the notices waited for, the bad items and the dead letters read, the records put together. */
async function endOfPhase(ctx: Ctx, plan: ArrivalsPlan, [d, b, q]: Ran, seen: { longPolls: LongPollRecord[]; notices: () => NoticeRecord[] }): Promise<ArrivalsRun> {
  const results = [...d.map((r) => r.result), ...b.flatMap((r) => r.results), ...q.map((r) => r.result)];
  await waitForNotices(results, seen.notices, ctx.deadline);
  return {
    results,
    delayed: d.map((r) => r.record),
    batches: b.flatMap((r) => r.sends),
    queued: q.map((r) => r.record),
    longPolls: seen.longPolls,
    notices: seen.notices(),
    badItems: await readBadItems(ctx.client, plan.batches),
    deadLetters: await deadLettersOf(ctx.client, new Set(plan.workflows.map((wf) => wf.id))),
    held: { releasedAt: ctx.gate.releasedAt(), atKill: ctx.gate.atKill() },
  };
}

async function runDelayed(ctx: Ctx, d: DelayedStart, turn: Promise<void>): Promise<{ result: WorkflowResult; record: DelayedRecord }> {
  const result = newResult(d.workflow.id, d.workflow.kind);
  const record: DelayedRecord = { id: d.workflow.id, delayMs: d.delayMs, wave: d.wave, sentAt: null, answeredAt: null };
  await turn;
  record.sentAt = Date.now();
  const started = startUntilAccepted(ctx.client, d.workflow.payload, result, { deadline: ctx.deadline });
  if (d.wave === "kill") ctx.killSends.push(started);
  result.started = await started;
  record.answeredAt = result.startedAt ?? null;
  if (result.started) await ctx.follow(result);
  return { result, record };
}

/** The batch, then (the second one) its repeat once the restart is over; each workflow accepted is followed. */
async function runBatch(ctx: Ctx, batch: BatchPlan): Promise<{ sends: BatchSend[]; results: WorkflowResult[] }> {
  await (batch.wave === "lead" ? sleep((batch.index + 1) * BATCH_PACE_MS) : ctx.gate.released);
  const results = batch.items.flatMap((item) => ("workflow" in item ? [newResult(item.workflow.id, item.workflow.kind)] : []));
  const sends: BatchSend[] = [];
  const follows: Promise<void>[] = [];
  const send = async (kind: BatchSend["send"]): Promise<void> => {
    const record: BatchSend = { batch: batch.index, send: kind, attempts: [] };
    sends.push(record);
    const sent = sendBatch(ctx.client, batch.items, record, ctx.deadline);
    if (kind === "first" && batch.wave === "kill") ctx.killSends.push(sent);
    await sent;
    for (const result of results.filter((r) => !r.started && acceptedIn(record, r.id))) {
      result.started = true;
      follows.push(ctx.follow(result));
    }
  };
  await send("first");
  if (batch.repeated) {
    await ctx.gate.after();
    await sleep(SECOND_COPY_AFTER_MS);
    await send("repeat");
  }
  await Promise.all(follows);
  return { sends, results };
}

/** Whether some answer of the send started the workflow or found it started (201 or 200). */
const acceptedIn = (send: BatchSend, id: string): boolean =>
  send.attempts.some((a) => a.answers?.some((answer) => (answer.status === 201 || answer.status === 200) && answer.workflowId === id));

/** Both copies of the message; the workflow, made by the queue's consumer, is followed from the first copy's 202. */
async function runQueued(ctx: Ctx, q: QueuedStart, turn: Promise<void>): Promise<{ result: WorkflowResult; record: QueuedRecord }> {
  const result = newResult(q.workflow.id, q.workflow.kind);
  const record: QueuedRecord = { id: q.workflow.id, wave: q.wave, copies: [] };
  const message = startMessage(q.workflow);
  await turn;
  const first = queueUntilTaken(ctx.client, message, ctx.deadline);
  if (q.wave === "kill") ctx.killSends.push(first);
  record.copies.push(await first);
  // Started as far as the soak can tell: the final reading then finds the workflow, or says it never came.
  result.started = record.copies.some((c) => c.statuses.includes(202));
  let secondTakenAt: number | null = null;
  const unseen = (): boolean => result.status === null && secondTakenAt !== null && Date.now() - secondTakenAt > UNSEEN_GIVE_UP_MS;
  const following = result.started ? ctx.follow(result, unseen) : Promise.resolve();
  await (q.wave === "kill" ? ctx.gate.after() : sleep(SECOND_COPY_AFTER_MS));
  record.copies.push(await queueUntilTaken(ctx.client, message, ctx.deadline));
  secondTakenAt = Date.now();
  if (!result.started && record.copies.some((c) => c.statuses.includes(202))) {
    result.started = true;
    await ctx.follow(result, unseen);
  }
  await following;
  return { result, record };
}

/** Waits (bounded) until every workflow seen ended has a notice at the remote. */
async function waitForNotices(results: readonly WorkflowResult[], notices: () => NoticeRecord[], deadline: number): Promise<void> {
  const ended = results.filter((r) => r.terminal).map((r) => r.id);
  const until = Math.min(deadline, Date.now() + NOTICE_WAIT_MS);
  while (Date.now() < until) {
    const noticed = new Set(notices().map((n) => n.workflowId));
    if (ended.every((id) => noticed.has(id))) return;
    await sleep(NOTICE_LOOK_MS);
  }
}

/** Each bad item's id read once: nothing may exist under it. */
async function readBadItems(client: ShepherdClient, batches: readonly BatchPlan[]): Promise<{ id: string; status: number }[]> {
  const ids = batches.flatMap((b) => b.items.flatMap((item) => ("bad" in item ? [item.bad.id] : [])));
  return Promise.all(ids.map(async (id) => ({ id, status: (await client.getWorkflow(id)).status })));
}

/** The STARTS queue's dead letters that name one of `ids` (the first page, newest first, is enough for a soak). */
async function deadLettersOf(client: ShepherdClient, ids: ReadonlySet<string>): Promise<StartDeadLetter[] | null> {
  const page = await client.listStartDeadLetters();
  return page.value ? page.value.deadLetters.filter((d) => d.workflowId !== null && ids.has(d.workflowId)) : null;
}
