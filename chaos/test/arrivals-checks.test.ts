// The arrivals phase's plan and checks against the facts they read: the driver's records, the remote's end notices
// (signed with the standardwebhooks library, as Shepherd signs them) and the final views and histories.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Webhook } from "standardwebhooks";
import type { HistoryEvent, WorkflowView } from "../lib/api-shapes.ts";
import { arrivalsSecret, buildArrivals, itemId } from "../lib/arrivals.ts";
import type { BatchPlan } from "../lib/arrivals.ts";
import type { DelayedRecord, QueuedRecord } from "../lib/arrivals-driver.ts";
import type { BatchAttempt, BatchSend, ItemAnswer, LongPollRecord, ResultAsk } from "../lib/arrival-sends.ts";
import { checkBatches, checkDelayedStarts, checkLongPolls, checkNotices, checkQueuedStarts, dueAgainst } from "../lib/checks/arrivals.ts";
import type { Final } from "../lib/finals.ts";
import { noticeId, readNotice } from "../lib/notices.ts";

const plan = buildArrivals({ seed: "1", count: 10, remoteUrl: "http://127.0.0.1:8812" });
const secret = arrivalsSecret("1");
const OUTPUT = { a1: { effectId: "e1" }, a2: { effectId: "e2" } };

function final(id: string, events: Partial<HistoryEvent>[], view: Partial<WorkflowView> = {}): Final {
  const full: WorkflowView = { id, name: "chaos-arrivals", status: "completed", steps: [], createdAt: 0, updatedAt: 0, endedAt: 5_000, output: OUTPUT, redriveCount: 0, ...view };
  return { id, kind: "arrivals", started: true, view: full, readStatus: 200, events: events.map((e) => ({ type: "x", at: 0, ...e })), language: undefined };
}

const started = (at: number, startAt?: number): Partial<HistoryEvent> => ({ type: "workflow_started", at, data: startAt === undefined ? {} : { startAt } });

describe("the arrivals plan", () => {
  it("sends ten through each door, a third of the delayed ones with the soak, one bad item in the first batch's middle, the second batch twice", () => {
    assert.equal(plan.workflows.length, 30);
    assert.deepEqual(plan.delayed.map((d) => d.wave), ["lead", "lead", "lead", "lead", "kill", "kill", "kill", "kill", "kill", "kill"]);
    assert.ok(plan.delayed.every((d) => d.workflow.payload.startDelayMs === d.delayMs && d.workflow.payload.notify?.secret === secret));
    const [first, second] = plan.batches;
    assert.deepEqual(first?.items.map((item) => "bad" in item), [false, false, true, false, false, false]);
    assert.deepEqual([first?.repeated, second?.repeated, second?.wave], [false, true, "kill"]);
    assert.deepEqual(plan.queued.map((q) => q.wave), [...Array(5).fill("lead"), ...Array(5).fill("kill")]);
  });
});

describe("the delayed starts' check", () => {
  const id = "chaos-1-delayed-0001";
  const record: DelayedRecord = { id, delayMs: 2_000, wave: "kill", sentAt: 10_000, answeredAt: 10_050 };
  const startAt = 12_010;
  const scheduled: Partial<HistoryEvent> = { type: "workflow_scheduled", at: 10_010, data: { startAt } };

  it("passes a start made once, at its time, that completed; and says when it fell due against the restart", () => {
    const check = checkDelayedStarts([record], [final(id, [scheduled, started(12_030, startAt)], { startAt })], { from: 11_000, to: 13_000 });
    assert.equal(check.status, "pass", JSON.stringify(check.data));
    assert.match(check.detail, /1 in the outage/);
    assert.equal(dueAgainst(startAt, { from: 13_000, to: 14_000 }), "before the kill");
  });

  it("fails a workflow started twice", () => {
    const check = checkDelayedStarts([record], [final(id, [scheduled, started(12_030, startAt), started(12_500, startAt)], { startAt })], null);
    assert.equal(check.status, "fail");
    assert.deepEqual((check.data?.violations as { kind: string }[]).map((v) => v.kind), ["started 2 times"]);
  });

  it("fails a start made before its time, and a start time that is not the delay asked", () => {
    const early = checkDelayedStarts([record], [final(id, [scheduled, started(startAt - 1, startAt)], { startAt })], null);
    assert.deepEqual((early.data?.violations as { kind: string }[]).map((v) => v.kind), ["started before its time"]);
    const wrong = checkDelayedStarts([record], [final(id, [{ ...scheduled, data: { startAt: 11_000 } }, started(11_000, 11_000)], { startAt: 11_000 })], null);
    assert.deepEqual((wrong.data?.violations as { kind: string }[]).map((v) => v.kind), ["startAt is not the delay asked"]);
  });

  it("fails one that did not complete, and one made running at once before its delay was up", () => {
    const open = checkDelayedStarts([record], [final(id, [scheduled], { startAt, status: "scheduled" })], null);
    assert.deepEqual((open.data?.violations as { kind: string }[]).map((v) => v.kind), ["delayed start not completed", "started 0 times"]);
    const atOnce = checkDelayedStarts([record], [final(id, [started(10_500)])], null);
    assert.deepEqual((atOnce.data?.violations as { kind: string }[]).map((v) => v.kind), ["started before its time"]);
  });
});

describe("the batches' check", () => {
  const batches = plan.batches;
  const [first, second] = batches as [BatchPlan, BatchPlan];
  const answers = (batch: BatchPlan, status: (id: string) => number): ItemAnswer[] =>
    batch.items.map((item, index) => {
      const id = itemId(item);
      const s = "bad" in item ? 400 : status(id);
      return { index, status: s, workflowId: s < 300 ? id : null, code: s < 300 ? null : "validation_failed" };
    });
  const attempt = (batch: BatchPlan, list: ItemAnswer[] | null, status = 200): BatchAttempt => ({ sentAt: 0, endAt: 1, status, ids: batch.items.map(itemId), answers: list });
  const sends = (over: Partial<Record<"first0" | "first1" | "repeat1", BatchAttempt[]>> = {}): BatchSend[] => [
    { batch: 0, send: "first", attempts: over.first0 ?? [attempt(first, answers(first, () => 201))] },
    { batch: 1, send: "first", attempts: over.first1 ?? [attempt(second, answers(second, () => 201))] },
    { batch: 1, send: "repeat", attempts: over.repeat1 ?? [attempt(second, answers(second, () => 200))] },
  ];
  const finals = batches.flatMap((b) => b.items.flatMap((item) => ("workflow" in item ? [final(item.workflow.id, [started(1)])] : [])));
  const bad = [{ id: "chaos-1-batched-bad", status: 404 }];
  const kinds = (sent: BatchSend[], f = finals, b = bad) => ((checkBatches(batches, sent, f, b).data?.violations as { kind: string }[]) ?? []).map((v) => v.kind);

  it("passes answers in item order, 201 then 200 on the repeat, 400 for the bad item, one workflow per id", () => {
    const check = checkBatches(batches, sends(), finals, bad);
    assert.equal(check.status, "pass", JSON.stringify(check.data));
  });

  it("accepts a 200 after a request the restart cut, and an item refused for now then sent again", () => {
    const cut = attempt(second, null, 0);
    const busy = answers(second, (id) => (id.endsWith("0007") ? 503 : 201));
    const resent: BatchAttempt = { sentAt: 2, endAt: 3, status: 200, ids: ["chaos-1-batched-0007"], answers: [{ index: 0, status: 201, workflowId: "chaos-1-batched-0007", code: null }] };
    assert.deepEqual(kinds(sends({ first1: [cut, attempt(second, answers(second, () => 200))] })), []);
    assert.deepEqual(kinds(sends({ first1: [attempt(second, busy), resent] })), []);
  });

  it("fails answers out of item order, a repeat that created again, and a bad item accepted", () => {
    const shuffled = answers(first, () => 201).map((a, k, all) => (k === 0 ? { ...a, index: 1 } : k === 1 ? { ...a, index: 0 } : all[k] ?? a));
    assert.ok(kinds(sends({ first0: [attempt(first, shuffled)] })).includes("answer out of item order"));
    assert.deepEqual(kinds(sends({ repeat1: [attempt(second, answers(second, () => 201))] })).slice(0, 2), ["answered 201, not 200", "answered 201, not 200"]);
    const accepted = answers(first, () => 201).map((a) => (a.status === 400 ? { ...a, status: 201, workflowId: "chaos-1-batched-bad" } : a));
    assert.deepEqual(kinds(sends({ first0: [attempt(first, accepted)] }), finals, [{ id: "chaos-1-batched-bad", status: 200 }]), ["bad item not refused with a 4xx", "the bad item's id answers"]);
  });

  it("fails an id whose workflow started twice", () => {
    const [head, ...rest] = finals;
    assert.ok(head);
    assert.deepEqual(kinds(sends(), [final(head.id, [started(1), started(2)]), ...rest]), ["started 2 times"]);
  });
});

describe("the queued starts' check", () => {
  const id = "chaos-1-queued-0001";
  const record: QueuedRecord = { id, wave: "lead", copies: [{ sentAt: 0, endAt: 1, statuses: [202] }, { sentAt: 2, endAt: 3, statuses: [0, 202] }] };

  it("passes one workflow, started once, for a message sent twice", () => {
    assert.equal(checkQueuedStarts([record], [final(id, [started(5)])], []).status, "pass");
  });

  it("fails a message started twice, a message that made no workflow, and a dead letter", () => {
    const kinds = (check: ReturnType<typeof checkQueuedStarts>) => (check.data?.violations as { kind: string }[]).map((v) => v.kind);
    assert.deepEqual(kinds(checkQueuedStarts([record], [final(id, [started(5), started(6)])], [])), ["started 2 times"]);
    const missing: Final = { id, kind: "queued", started: true, view: null, readStatus: 404, events: [], language: undefined };
    assert.deepEqual(kinds(checkQueuedStarts([record], [missing], [])), ["no workflow for the message"]);
    const dead = { messageId: "m1", workflowId: id, error: { code: "validation_failed", message: "bad" } };
    assert.deepEqual(kinds(checkQueuedStarts([record], [final(id, [started(5)])], [dead])), ["dead-lettered"]);
  });
});

describe("the notices' check", () => {
  const id = "chaos-1-batched-0001";
  const ids = new Set([id]);
  const ended = final(id, [started(1)]);
  /** A notice as Shepherd posts it: the final view, signed with `key` under `webhookId`. */
  function notice(key = secret, webhookId = noticeId(id), view: Partial<WorkflowView> = {}) {
    const body = JSON.stringify({ type: `workflow.${view.status ?? "completed"}`, timestamp: new Date().toISOString(), data: { ...ended.view, ...view } });
    const timestamp = new Date();
    const headers = { "webhook-id": webhookId, "webhook-timestamp": String(Math.floor(timestamp.getTime() / 1000)), "webhook-signature": new Webhook(key).sign(webhookId, timestamp, body) };
    return readNotice(headers, body, secret, Date.now());
  }
  const kinds = (check: ReturnType<typeof checkNotices>) => ((check.data?.violations as { kind: string }[]) ?? []).map((v) => v.kind);

  it("passes a signed notice of the end, and counts a repeat of it without failing", () => {
    const check = checkNotices(ids, [ended], [notice(), notice()]);
    assert.equal(check.status, "pass", JSON.stringify(check.data));
    assert.equal(check.data?.repeats, 1);
    assert.match(check.detail, /1 of them repeats of one notice \(delivery is at least once\)/);
  });

  it("fails an ended workflow without a notice", () => {
    assert.deepEqual(kinds(checkNotices(ids, [ended], [])), ["ended without a notice"]);
  });

  it("fails a notice whose signature does not verify with the phase's secret", () => {
    const other = `whsec_${Buffer.alloc(24, 9).toString("base64")}`;
    const forged = notice(other);
    assert.equal(forged.verified, false);
    assert.deepEqual(kinds(checkNotices(ids, [ended], [forged])), ["signature does not verify"]);
  });

  it("fails notices of one workflow under another webhook-id, or naming a status that is not its end", () => {
    assert.deepEqual(kinds(checkNotices(ids, [ended], [notice(), notice(secret, noticeId(id, 1))])), ["webhook-id is not the end's"]);
    assert.deepEqual(kinds(checkNotices(ids, [ended], [notice(secret, noticeId(id), { status: "failed" })])), ["notice does not name the final status"]);
  });
});

describe("the long polls' check", () => {
  const id = "chaos-1-delayed-0001";
  const ask = (status: number, resultStatus: string | null, extra: Partial<ResultAsk> = {}): ResultAsk => ({ sentAt: 0, endAt: 1, status, resultStatus, ...extra });
  const poll = (...asks: ResultAsk[]): LongPollRecord => ({ id, waitMs: 20_000, asks });
  const ended = final(id, [started(1)]);

  it("passes a poll asked again on 202 and across the restart, ending in the final result", () => {
    const check = checkLongPolls([poll(ask(202, "scheduled"), ask(0, null), ask(404, null), ask(200, "completed", { output: OUTPUT }))], [ended]);
    assert.equal(check.status, "pass", JSON.stringify(check.data));
    assert.match(check.detail, /no answer ×1/);
  });

  it("fails a 200 that has not ended, a result that is not the final view's, and a poll that never got its 200", () => {
    const kinds = (check: ReturnType<typeof checkLongPolls>) => (check.data?.violations as { kind: string }[]).map((v) => v.kind);
    assert.deepEqual(kinds(checkLongPolls([poll(ask(200, "running"), ask(200, "completed", { output: OUTPUT }))], [ended])), ["200 with a status that has not ended"]);
    assert.deepEqual(kinds(checkLongPolls([poll(ask(200, "completed", { output: { a1: "other" } }))], [ended])), ["result is not the final view's output or error"]);
    assert.deepEqual(kinds(checkLongPolls([poll(ask(202, "running"), ask(0, null))], [ended])), ["never answered 200"]);
  });
});
