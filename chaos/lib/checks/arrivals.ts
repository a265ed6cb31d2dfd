// The arrivals phase's checks (contract v1.2, "Starting from anywhere, and getting the result back"; reliability case
// 32): every delayed start started once and never before its time, the batches answered item by item in order with one
// workflow per id, one workflow per start message however often it came, every ended workflow's notice signed and
// naming its end, and every long poll of a result ending in the workflow's final result. Pure: over the driver's
// records, the remote's notices and the final views and histories.
import { isDeepStrictEqual } from "node:util";
import { BACK_PRESSURE_STATUSES } from "../starts.ts";
import type { ArrivalsPlan, BatchPlan } from "../arrivals.ts";
import { itemId } from "../arrivals.ts";
import type { ArrivalsRun, DelayedRecord, QueuedRecord } from "../arrivals-driver.ts";
import type { BatchAttempt, BatchSend, LongPollRecord } from "../arrival-sends.ts";
import type { StartDeadLetter } from "../api-shapes.ts";
import { isTerminal } from "../client.ts";
import type { Final } from "../finals.ts";
import { noticeId } from "../notices.ts";
import type { NoticeRecord } from "../notices.ts";
import type { Outage } from "../restart.ts";
import { fail, pass, tally } from "./check.ts";
import type { Check, Violation } from "./check.ts";

/** The front door's clock and the soak's are one machine's; this much covers their rounding. */
const CLOCK_SLACK_MS = 100;

const byId = (finals: readonly Final[]): Map<string, Final> => new Map(finals.map((f) => [f.id, f]));
const eventsOf = (f: Final | undefined, type: string) => f?.events.filter((e) => e.type === type) ?? [];
const verdict = (violations: readonly Violation[]) => (violations.length ? fail : pass);

/** When a delayed start fell due, against the restart. */
export function dueAgainst(startAt: number, outage: Outage | null): "before the kill" | "in the outage" | "after the restart" | "no restart" {
  if (!outage) return "no restart";
  return startAt < outage.from ? "before the kill" : startAt <= outage.to ? "in the outage" : "after the restart";
}

/** The start time a delayed workflow was given: its view's, else its `workflow_scheduled`'s (none: it was made running). */
export function startAtOf(f: Final | undefined): number | null {
  const scheduled = eventsOf(f, "workflow_scheduled")[0]?.data?.startAt;
  return f?.view?.startAt ?? (typeof scheduled === "number" ? scheduled : null);
}

/**
 * Every delayed start completed with exactly one `workflow_started` (at most one `workflow_scheduled`), never before its
 * start time, which is the time asked for (its delay after the front door took it, within the send's window).
 */
export function checkDelayedStarts(records: readonly DelayedRecord[], finals: readonly Final[], outage: Outage | null): Check {
  const name = "every delayed start started once, never early";
  const finalsById = byId(finals);
  const violations: Violation[] = [];
  const due: string[] = [];
  let latest = 0;
  for (const r of records) {
    const f = finalsById.get(r.id);
    const started = eventsOf(f, "workflow_started");
    const startAt = startAtOf(f);
    if (f?.view?.status !== "completed") violations.push({ kind: "delayed start not completed", id: r.id, status: f?.view?.status ?? null });
    if (started.length !== 1) violations.push({ kind: `started ${started.length} times`, id: r.id, at: started.map((e) => e.at) });
    if (eventsOf(f, "workflow_scheduled").length > 1) violations.push({ kind: "scheduled more than once", id: r.id });
    const first = started[0];
    // Made running at once (no start time kept) only when its time had passed by the time its object took it.
    const earliest = startAt ?? (r.sentAt === null ? null : r.sentAt + r.delayMs - CLOCK_SLACK_MS);
    if (first && earliest !== null && first.at < earliest) violations.push({ kind: "started before its time", id: r.id, startedAt: first.at, startAt: earliest });
    if (startAt === null || r.sentAt === null) continue;
    const last = (r.answeredAt ?? Date.now()) + r.delayMs + CLOCK_SLACK_MS;
    if (startAt < r.sentAt + r.delayMs - CLOCK_SLACK_MS || startAt > last) violations.push({ kind: "startAt is not the delay asked", id: r.id, startAt, sentAt: r.sentAt, answeredAt: r.answeredAt, delayMs: r.delayMs });
    due.push(dueAgainst(startAt, outage));
    if (first) latest = Math.max(latest, first.at - startAt);
  }
  const completed = records.filter((r) => finalsById.get(r.id)?.view?.status === "completed").length;
  const deferred = records.filter((r) => eventsOf(finalsById.get(r.id), "workflow_start_deferred").length > 0).length;
  const dueText = Object.entries(tally(due)).map(([when, n]) => `${n} ${when}`).join(", ") || "none scheduled";
  const detail = `${completed}/${records.length} completed; due ${dueText}; started at most ${latest} ms after their time${deferred ? ` (${deferred} deferred by back-pressure)` : ""}`;
  return verdict(violations)(name, detail, { violations: violations.slice(0, 30), due: tally(due), deferred });
}

/** The statuses an item may be answered with in one request of a send, given the requests before it. */
function expectedStatuses(send: BatchSend, attempt: BatchAttempt, id: string): number[] {
  if (send.send === "repeat") return [200];
  // A request that got no answer (the kill) or none of this item's own may have made it: a later one finds it (200).
  const earlier = send.attempts.slice(0, send.attempts.indexOf(attempt)).filter((a) => a.ids.includes(id));
  const unsettled = (a: BatchAttempt): boolean => a.answers === null || BACK_PRESSURE_STATUSES.has(a.answers.find((x) => a.ids[x.index] === id)?.status ?? 0);
  return earlier.some(unsettled) ? [201, 200] : [201];
}

/** The violations of one send's answers: one per item, in item order, each with the status its start alone would get. */
function sendViolations(send: BatchSend, plan: BatchPlan | undefined, counts: { backPressure: number; statuses: string[] }): Violation[] {
  const violations: Violation[] = [];
  const bad = new Set(plan?.items.flatMap((item) => ("bad" in item ? [item.bad.id] : [])) ?? []);
  const answered = new Set<string>();
  for (const attempt of send.attempts) {
    if (!attempt.answers) continue;
    if (attempt.answers.length !== attempt.ids.length) violations.push({ kind: "not one answer per item", batch: send.batch, send: send.send, items: attempt.ids.length, answers: attempt.answers.length });
    for (const [k, answer] of attempt.answers.entries()) {
      const id = attempt.ids[k] ?? "";
      const where = { batch: send.batch, send: send.send, position: k, id };
      if (answer.index !== k) violations.push({ kind: "answer out of item order", ...where, index: answer.index });
      counts.statuses.push(String(answer.status));
      if (BACK_PRESSURE_STATUSES.has(answer.status)) {
        counts.backPressure += 1;
        continue;
      }
      answered.add(id);
      if (bad.has(id)) {
        if (answer.status < 400 || answer.status >= 500 || answer.workflowId) violations.push({ kind: "bad item not refused with a 4xx", ...where, status: answer.status });
        continue;
      }
      if (answer.workflowId !== id) violations.push({ kind: "answer names another workflow", ...where, workflowId: answer.workflowId });
      const expected = expectedStatuses(send, attempt, id);
      if (!expected.includes(answer.status)) violations.push({ kind: `answered ${answer.status}, not ${expected.join(" or ")}`, ...where, code: answer.code });
    }
  }
  const unanswered = (plan?.items ?? []).map(itemId).filter((id) => !answered.has(id));
  if (unanswered.length > 0) violations.push({ kind: "items never answered", batch: send.batch, send: send.send, ids: unanswered, lastStatus: send.attempts.at(-1)?.status ?? null });
  return violations;
}

/**
 * Every send of a batch answered each item once, in item order, with the status its start alone would get (201; 200
 * in the repeat, or after a request that got no answer; a 4xx for the bad item); no id was created twice, each has
 * one workflow that started once, and nothing exists under the bad item's id.
 */
export function checkBatches(batches: readonly BatchPlan[], sends: readonly BatchSend[], finals: readonly Final[], badItems: readonly { id: string; status: number }[]): Check {
  const name = "batch answers in item order, one workflow per id";
  const finalsById = byId(finals);
  const counts = { backPressure: 0, statuses: [] as string[] };
  const violations = sends.flatMap((send) => sendViolations(send, batches[send.batch], counts));
  for (const batch of batches) if (!sends.some((s) => s.batch === batch.index && s.send === "first")) violations.push({ kind: "batch never sent", batch: batch.index });
  const created = tally(sends.flatMap((s) => s.attempts.flatMap((a) => a.answers?.filter((x) => x.status === 201).map((x) => x.workflowId ?? "") ?? [])));
  for (const item of batches.flatMap((b) => b.items)) {
    if (!("workflow" in item)) continue;
    const id = item.workflow.id;
    const starts = eventsOf(finalsById.get(id), "workflow_started").length;
    if ((created[id] ?? 0) > 1) violations.push({ kind: "created twice (201 twice)", id, created: created[id] });
    if (!finalsById.get(id)?.view) violations.push({ kind: "no workflow for the item", id });
    else if (starts !== 1) violations.push({ kind: `started ${starts} times`, id });
  }
  for (const bad of badItems) if (bad.status !== 404) violations.push({ kind: "the bad item's id answers", id: bad.id, status: bad.status });
  const items = batches.reduce((n, b) => n + b.items.length, 0);
  const statuses = Object.entries(tally(counts.statuses)).map(([status, n]) => `${status} ×${n}`).join(", ");
  const detail = `${batches.length} batches of ${items} items, ${sends.length} sends (${sends.filter((s) => s.send === "repeat").length} repeated): ${statuses || "no answer"}${counts.backPressure ? ` (${counts.backPressure} refused for now, sent again)` : ""}; ${violations.length} violation(s)`;
  return verdict(violations)(name, detail, { violations: violations.slice(0, 30) });
}

/** Every start message, sent twice, made one workflow that started once and completed; none was dead-lettered. */
export function checkQueuedStarts(records: readonly QueuedRecord[], finals: readonly Final[], deadLetters: readonly StartDeadLetter[] | null): Check {
  const name = "one workflow per start message, each completes";
  const finalsById = byId(finals);
  const violations: Violation[] = [];
  for (const r of records) {
    const f = finalsById.get(r.id);
    const taken = r.copies.filter((c) => c.statuses.includes(202)).length;
    const starts = eventsOf(f, "workflow_started").length;
    if (taken < 2) violations.push({ kind: "a copy was not taken by POST /dev/starts", id: r.id, statuses: r.copies.map((c) => c.statuses) });
    if (!f?.view) violations.push({ kind: "no workflow for the message", id: r.id, readStatus: f?.readStatus ?? null });
    else if (f.view.status !== "completed") violations.push({ kind: "queued start not completed", id: r.id, status: f.view.status });
    if (f?.view && starts !== 1) violations.push({ kind: `started ${starts} times`, id: r.id });
  }
  for (const d of deadLetters ?? []) violations.push({ kind: "dead-lettered", id: d.workflowId, messageId: d.messageId, error: d.error });
  const completed = records.filter((r) => finalsById.get(r.id)?.view?.status === "completed").length;
  const copies = records.reduce((n, r) => n + r.copies.length, 0);
  const detail = `${completed}/${records.length} completed from ${copies} messages (each sent twice), one workflow_started each; ${deadLetters === null ? "dead letters unread" : `${deadLetters.length} dead-lettered`}`;
  return verdict(violations)(name, detail, { violations: violations.slice(0, 30) });
}

/**
 * Every workflow of the phase that ended got its notice: each verifies against the phase's secret, carries the
 * webhook-id `<id>:end:<redriveCount>` and the final status and output. Delivery is at least once, so the same
 * notice may come more than once: such repeats are counted, not failed.
 */
export function checkNotices(ids: ReadonlySet<string>, finals: readonly Final[], notices: readonly NoticeRecord[]): Check {
  const name = "every ended workflow notified, signed";
  const violations: Violation[] = [];
  const byWorkflow = new Map<string, NoticeRecord[]>();
  for (const n of notices) {
    if (!n.verified) violations.push({ kind: "signature does not verify", webhookId: n.webhookId, error: n.verifyError });
    if (n.workflowId === null || !ids.has(n.workflowId)) violations.push({ kind: "notice for a workflow that asked for none", webhookId: n.webhookId, workflowId: n.workflowId });
    else byWorkflow.set(n.workflowId, [...(byWorkflow.get(n.workflowId) ?? []), n]);
  }
  const ended = finals.filter((f) => ids.has(f.id) && isTerminal(f.view?.status));
  let repeats = 0;
  for (const f of ended) {
    const view = f.view;
    const received = byWorkflow.get(f.id) ?? [];
    if (!view) continue;
    if (received.length === 0) violations.push({ kind: "ended without a notice", id: f.id, status: view.status });
    repeats += Math.max(0, received.length - 1);
    const expectedId = noticeId(f.id, view.redriveCount ?? 0);
    for (const n of received) {
      if (n.webhookId !== expectedId) violations.push({ kind: "webhook-id is not the end's", id: f.id, webhookId: n.webhookId, expected: expectedId });
      if (n.status !== view.status || n.type !== `workflow.${view.status}`) violations.push({ kind: "notice does not name the final status", id: f.id, type: n.type, status: n.status, final: view.status });
      else if (!isDeepStrictEqual(n.output, view.output)) violations.push({ kind: "notice's output is not the final view's", id: f.id });
    }
  }
  const notified = ended.filter((f) => byWorkflow.has(f.id)).length;
  const unverified = notices.filter((n) => !n.verified).length;
  const detail = `${notified}/${ended.length} ended workflows notified by ${notices.length} notices, ${repeats} of them repeats of one notice (delivery is at least once); ${unverified} not verified`;
  return verdict(violations)(name, detail, { violations: violations.slice(0, 30), repeats });
}

/** How one ask of a long poll ended, for the report. */
export const askOutcome = (status: number): string => (status === 200 ? "200" : status === 202 ? "202" : status === 0 ? "no answer" : String(status));

/**
 * Every long poll ended with a 200 whose status and output (or error) are the workflow's final view's, and no 200 ever
 * carried a status that has not ended (nor a 202 one that has).
 */
export function checkLongPolls(records: readonly LongPollRecord[], finals: readonly Final[]): Check {
  const name = "every result long poll ends in the final result";
  const finalsById = byId(finals);
  const violations: Violation[] = [];
  for (const r of records) {
    const view = finalsById.get(r.id)?.view;
    for (const ask of r.asks) {
      if (ask.status === 200 && !isTerminal(ask.resultStatus)) violations.push({ kind: "200 with a status that has not ended", id: r.id, status: ask.resultStatus, at: ask.endAt });
      if (ask.status === 202 && isTerminal(ask.resultStatus)) violations.push({ kind: "202 with an ended status", id: r.id, status: ask.resultStatus, at: ask.endAt });
    }
    const last = r.asks.at(-1);
    if (last?.status !== 200) violations.push({ kind: "never answered 200", id: r.id, asks: r.asks.length, last: last?.status ?? null });
    else if (last.resultStatus !== view?.status) violations.push({ kind: "result's status is not the final one", id: r.id, status: last.resultStatus, final: view?.status ?? null });
    else if (!isDeepStrictEqual(last.output, view.output) || !isDeepStrictEqual(last.error, view.error)) violations.push({ kind: "result is not the final view's output or error", id: r.id });
  }
  const ended = records.filter((r) => r.asks.at(-1)?.status === 200).length;
  const asks = Object.entries(tally(records.flatMap((r) => r.asks.map((a) => askOutcome(a.status))))).map(([outcome, n]) => `${outcome} ×${n}`).join(", ");
  const detail = `${ended}/${records.length} answered 200 with the final result (asks: ${asks || "none"})`;
  return verdict(violations)(name, detail, { violations: violations.slice(0, 30) });
}

/** The arrivals phase's five checks; none when the soak ran no such workflow. */
export function checkArrivals(plan: ArrivalsPlan, run: ArrivalsRun, finals: readonly Final[], outage: Outage | null): Check[] {
  if (plan.workflows.length === 0) return [];
  return [
    checkDelayedStarts(run.delayed, finals, outage),
    checkBatches(plan.batches, run.batches, finals, run.badItems),
    checkQueuedStarts(run.queued, finals, run.deadLetters),
    checkNotices(new Set(plan.workflows.map((wf) => wf.id)), finals, run.notices),
    checkLongPolls(run.longPolls, finals),
  ];
}
