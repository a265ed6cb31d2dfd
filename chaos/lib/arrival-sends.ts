// How the arrivals phase talks to Shepherd, as well-behaved clients do, and what it keeps of every answer for the
// checks: a batch of starts (sent again whole when no answer came, and only its items refused for now when one did),
// a start message put on the STARTS queue (sent until the dev route takes it), and a long poll of a workflow's result
// (asked again on 202, on a connection the restart cut, and on a 404 before a queued start has made the workflow).
import { sleep } from "../../scripts/lib/async.ts";
import { retryAfterMs } from "../../scripts/lib/http-json.ts";
import type { BatchItemAnswer } from "./api-shapes.ts";
import { itemBody, itemId } from "./arrivals.ts";
import type { BatchItem } from "./arrivals.ts";
import { isTerminal } from "./client.ts";
import type { Answer, ShepherdClient } from "./client.ts";
import type { WorkflowResult } from "./results.ts";
import { BACK_PRESSURE_STATUSES } from "./starts.ts";

const RESEND_MIN_MS = 250;
const RESEND_MAX_MS = 2_000;
/** A Retry-After is honoured up to this: a bug must not park the phase. */
const RETRY_AFTER_MAX_MS = 10_000;
/** Tries per send, on top of the deadline. */
const MAX_TRIES = 100;

/** One item's answer as the checks read it. */
export interface ItemAnswer {
  index: number;
  status: number;
  /** The answer's workflow's id (201 and 200). */
  workflowId: string | null;
  /** The error's code (anything else). */
  code: string | null;
}

/** One request of a batch: the ids it carried in order, and its answer. */
export interface BatchAttempt {
  sentAt: number;
  endAt: number;
  /** The request's status (0: no answer). */
  status: number;
  ids: string[];
  /** The answer's `results` as they came (null: no 200 answer). */
  answers: ItemAnswer[] | null;
}

/** One send of a batch (its first, or the deliberate repeat), however many requests it took. */
export interface BatchSend {
  batch: number;
  send: "first" | "repeat";
  attempts: BatchAttempt[];
}

const itemAnswer = (answer: BatchItemAnswer): ItemAnswer => ({ index: answer.index, status: answer.status, workflowId: answer.workflow?.id ?? null, code: answer.error?.code ?? null });

/**
 * Sends the items until every one has an answer of its own that is not back-pressure: a request with no answer, a 429
 * or a 5xx is sent again whole; from a 200, only the items answered 429 or 503 are.
 */
export async function sendBatch(client: ShepherdClient, items: readonly BatchItem[], record: BatchSend, deadline: number): Promise<void> {
  let pending = [...items];
  let wait = RESEND_MIN_MS;
  while (pending.length > 0 && Date.now() < deadline && record.attempts.length < MAX_TRIES) {
    const sentAt = Date.now();
    const answer = await client.startBatch(pending.map(itemBody));
    const answers = answer.value?.results.map(itemAnswer) ?? null;
    record.attempts.push({ sentAt, endAt: Date.now(), status: answer.status, ids: pending.map(itemId), answers });
    if (answers) pending = pending.filter((_, k) => BACK_PRESSURE_STATUSES.has(answers.find((a) => a.index === k)?.status ?? 0));
    else if (refusedForGood(answer.status)) return;
    if (pending.length > 0) await sleep(pause(answer, wait, deadline));
    wait = Math.min(RESEND_MAX_MS, wait * 2);
  }
}

/** One copy of a start message: every answer of the dev route until it took it (202). */
export interface QueuedCopy {
  sentAt: number;
  endAt: number;
  statuses: number[];
}

/** Puts the message on the STARTS queue through the dev route, sending it again until it is taken (202). */
export async function queueUntilTaken(client: ShepherdClient, message: unknown, deadline: number): Promise<QueuedCopy> {
  const copy: QueuedCopy = { sentAt: Date.now(), endAt: 0, statuses: [] };
  let wait = RESEND_MIN_MS;
  while (Date.now() < deadline && copy.statuses.length < MAX_TRIES) {
    const answer = await client.queueStart(message);
    copy.statuses.push(answer.status);
    if (answer.status === 202 || refusedForGood(answer.status)) break;
    await sleep(pause(answer, wait, deadline));
    wait = Math.min(RESEND_MAX_MS, wait * 2);
  }
  copy.endAt = Date.now();
  return copy;
}

/** One ask of a long poll: its answer's status (0: none came) and, with it, the result's. */
export interface ResultAsk {
  sentAt: number;
  endAt: number;
  status: number;
  resultStatus: string | null;
  /** With a 200: the result's output and error, to hold against the final view. */
  output?: unknown;
  error?: unknown;
}

export interface LongPollRecord {
  id: string;
  waitMs: number;
  asks: ResultAsk[];
}

/**
 * Waits for the workflow's end with `GET …/result?waitMs=`: asked again at once on 202, after a pause on anything
 * else that is not 200 (no answer while Shepherd restarts, a 404 before the workflow exists, back-pressure), until it
 * ends, `deadline` passes or `giveUp` says so. The driver's account of the workflow (`result`) is kept from the
 * answers, as followToEnd keeps it from readings.
 */
export async function longPoll(client: ShepherdClient, result: WorkflowResult, { waitMs, deadline, giveUp }: { waitMs: number; deadline: number; giveUp?: () => boolean }): Promise<LongPollRecord> {
  const record: LongPollRecord = { id: result.id, waitMs, asks: [] };
  let wait = RESEND_MIN_MS;
  while (Date.now() < deadline && record.asks.length < MAX_TRIES && !giveUp?.()) {
    const sentAt = Date.now();
    const answer = await client.getResult(result.id, Math.max(0, Math.min(waitMs, deadline - sentAt)));
    const value = answer.value;
    record.asks.push({ sentAt, endAt: Date.now(), status: answer.status, resultStatus: value?.status ?? null, ...(answer.status === 200 && value ? { output: value.output, error: value.error } : {}) });
    result.polls += 1;
    if (value) result.status = value.status;
    if (answer.status === 200 && isTerminal(value?.status)) {
      result.terminal = true;
      result.observedEndAt = Date.now();
      return record;
    }
    if (answer.status === 202) continue;
    result.pollErrors += 1;
    await sleep(pause(answer, wait, deadline));
    wait = Math.min(RESEND_MAX_MS, wait * 2);
  }
  return record;
}

/** A 4xx other than 429: sending the same again cannot help. */
const refusedForGood = (status: number): boolean => status >= 400 && status < 500 && status !== 429;

/** Retry-After when the answer has one (bounded), else the backoff; never past the deadline. */
function pause(answer: Answer, backoff: number, deadline: number): number {
  const asked = retryAfterMs(answer.retryAfter);
  const ms = asked === null ? backoff : Math.min(Math.max(asked, RESEND_MIN_MS), RETRY_AFTER_MAX_MS);
  return Math.max(0, Math.min(ms, deadline - Date.now()));
}
