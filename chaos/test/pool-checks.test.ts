// The pool phase's checks against the facts they read: the workflows' views, the remote's ledger and the workers' logs.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { WorkflowView } from "../lib/api-shapes.ts";
import { checkPollTimes, checkPoolCompleted, checkPoolEffects, checkPoolHandOuts, killFate, longestRoundTripIn, pollAllowance, pollOutcome } from "../lib/checks/pool.ts";
import type { Final } from "../lib/finals.ts";
import { buildPoolWorkflows, POOL_STEPS, poolKey } from "../lib/pool.ts";
import type { TaskRef } from "../lib/pool.ts";
import { readWorkerLog } from "../lib/pool-log.ts";
import type { PollLine, TaskLine, WorkerLog } from "../lib/pool-log.ts";
import { holdingCount } from "../lib/pool-workers.ts";
import type { KeyRecord, RemoteStats } from "../lib/remote-ledger.ts";

const [wf] = buildPoolWorkflows({ seed: "1", count: 1 });
assert.ok(wf);
const id = wf.id;
const effectOf = (step: string) => ({ effectId: `eff_${step}`, step });
const task = (stepId: string, attempt = 1): TaskRef => ({ workflowId: id, stepId, attempt });

function keyRecord(step: string, applied = 1, key = poolKey(id, step)): KeyRecord {
  return {
    key, kind: "action", workflowId: id, stepId: step, wellFormed: key === poolKey(id, step), item: null,
    requests: applied, attempts: [1], applied, replays: 0, replaysAfterDelivered: 0, abandoned: 0, faults: {}, delivered: true,
    appliedAt: applied ? 1 : null, appliedBody: applied ? effectOf(step) : null, log: [], jobs: [], lost: null,
  };
}

const ledger = (records: KeyRecord[]): RemoteStats => ({ keys: Object.fromEntries(records.map((r) => [r.key, r])) }) as unknown as RemoteStats;
const full = ledger(POOL_STEPS.map((step) => keyRecord(step)));

function final(status = "completed", outputs: Record<string, unknown> = Object.fromEntries(POOL_STEPS.map((s) => [s, effectOf(s)]))): Final {
  const steps = POOL_STEPS.map((step) => ({ id: step, status: step in outputs ? "succeeded" : "running", attempt: 1, attempts: [], output: outputs[step] }));
  const view: WorkflowView = { id, name: "chaos-pool", status, steps, createdAt: 0, updatedAt: 0 };
  return { id, kind: "pool", started: true, view, readStatus: 200, events: [], language: undefined };
}

const poll = (start: number, tookMs: number, tasks: TaskRef[] = [], status = 200): PollLine => ({ type: "poll", workerId: "w", start, end: start + tookMs, waitMs: 5_000, max: 2, status, tasks });
const done = (t: TaskRef, workerId: string, end: number): TaskLine => ({ type: "task", workerId, ...t, took: end - 500, end, heartbeats: [200], effect: 200, report: { what: "complete", statuses: [200] } });
const alarmsOnly = (alarmsOverdueMs: number) => ({ alarmsOverdueMs, roundTrips: [] });
const log = (workerId: string, polls: PollLine[], tasks: TaskLine[] = []): WorkerLog => ({ workerId, polls: polls.map((p) => ({ ...p, workerId })), tasks, unreadable: 0 });

/** w1 is killed at 2 000 holding fetch#1, which w2 gets as #2; w2 does the rest. */
const killed = { workerId: "w1", at: 2_000, replacement: "w3" };
const logs = [
  log("w1", [poll(0, 1_000, [task("fetch")])]),
  log("w2", [poll(0, 5_100), poll(5_100, 900, [task("fetch", 2)]), poll(6_000, 100, [task("resize"), task("store")])], [done(task("fetch", 2), "w2", 6_500)]),
];

describe("the pool checks", () => {
  it("pass a pool whose workflows completed, each key applied once, each attempt handed once and every poll in time", () => {
    const checks = [checkPoolCompleted([wf], [final()], { kill: killed, logs }), checkPoolEffects([wf], [final()], full), checkPoolHandOuts(logs), checkPollTimes(logs, null)];
    assert.deepEqual(checks.map((c) => c.status), ["pass", "pass", "pass", "pass"]);
  });

  it("follow the killed worker's task to the next worker that was handed it", () => {
    assert.deepEqual(killFate(logs, killed), { held: [task("fetch")], next: [{ workerId: "w2", attempt: 2, afterMs: 4_000 }] });
  });

  it("fail a workflow that did not complete, a kill whose task no other worker got, and a soak that killed no worker", () => {
    const lonely = [log("w1", [poll(0, 1_000, [task("fetch")])])];
    const check = checkPoolCompleted([wf], [final("running", {})], { kill: killed, logs: lonely });
    assert.deepEqual((check.data?.violations as { kind: string }[]).map((v) => v.kind), ["pool workflow not completed", "the killed worker's task never handed to another worker"]);
    assert.equal(checkPoolCompleted([wf], [final()], { kill: null, logs }).status, "fail");
  });

  it("take a held task the killed worker had reported (its attempt is the step's last, succeeded) as done, once another held task went on", () => {
    const twoHeld = [log("w1", [poll(0, 1_000, [task("fetch"), task("resize")])]), log("w2", [poll(5_100, 900, [task("resize", 2)])])];
    const view = final();
    const resize = view.view!.steps.find((step) => step.id === "resize")!;
    resize.attempt = 2;
    assert.equal(checkPoolCompleted([wf], [view], { kill: killed, logs: twoHeld }).status, "pass");
    const onlyReported = [log("w1", [poll(0, 1_000, [task("fetch")])])];
    const notExercised = checkPoolCompleted([wf], [final()], { kill: killed, logs: onlyReported });
    assert.deepEqual((notExercised.data?.violations as { kind: string }[]).map((v) => v.kind), ["every task the killed worker held had been reported (case 29 not exercised)"]);
  });

  it("fail a key applied twice, a step whose output is not its key's effect, and a key the contract does not give", () => {
    const twice = checkPoolEffects([wf], [final()], ledger([keyRecord("fetch", 2), keyRecord("resize"), keyRecord("store")]));
    assert.equal(twice.status, "fail");
    const wrongOutput = checkPoolEffects([wf], [final("completed", { fetch: effectOf("fetch"), resize: effectOf("store"), store: effectOf("store") })], full);
    assert.deepEqual((wrongOutput.data?.violations as { kind: string }[]).map((v) => v.kind), ["step output is not the effect applied under its key"]);
    const stray = checkPoolEffects([wf], [final()], ledger([...POOL_STEPS.map((s) => keyRecord(s)), keyRecord("fetch", 1, `${id}:fetch:2`)]));
    assert.deepEqual((stray.data?.violations as { kind: string }[]).map((v) => v.kind), ["key not as the contract says"]);
  });

  it("fail an attempt handed to two polls, even of two workers", () => {
    const two = [...logs, log("w4", [poll(5_500, 10, [task("fetch", 2)])])];
    const check = checkPoolHandOuts(two);
    assert.equal(check.status, "fail");
    assert.deepEqual((check.data?.violations as { task: string }[]).map((v) => v.task), [`${id}:fetch#2`]);
  });
});

describe("the poll times check (case 30)", () => {
  it("fail a poll answered past its waitMs + 1 s and one left unanswered outside the restart, and count the restart's apart", () => {
    const outage = { from: 10_000, to: 13_000 };
    const slow = [log("w1", [poll(0, 6_001), poll(20_000, 200, [], 0), poll(8_000, 2_100, [], 0), poll(11_000, 5, [], 0), poll(14_000, 5_000)])];
    const check = checkPollTimes(slow, outage);
    assert.equal(check.status, "fail");
    assert.deepEqual((check.data?.violations as { kind: string }[]).map((v) => v.kind), ["poll answered late", "poll without an answer outside the restart"]);
    assert.deepEqual(check.data?.counts, { answered: 1, late: 1, "cut by the restart": 2, "no answer": 1 });
  });

  it("count a poll late by no more than the alarms' most overdue apart, and fail one later than that", () => {
    const lateBy1500 = [log("w1", [poll(0, 5_000 + 1_000 + 1_500)])];
    assert.equal(checkPollTimes(lateBy1500, null, alarmsOnly(0)).status, "fail");
    const within = checkPollTimes(lateBy1500, null, alarmsOnly(2_000));
    assert.equal(within.status, "pass");
    assert.match(within.detail, /1 of them within the runtime's own lateness: alarms up to 2000 ms overdue, no read of the sampler in flight at those moments/);
    assert.equal(checkPollTimes(lateBy1500, null, alarmsOnly(1_000)).status, "fail");
  });

  // The run that asked for this: an empty poll of waitMs 5 000 answered after 6 816 ms at the burst's peak, alarms at
  // most 574 ms overdue. Its overtime window is [5 000, 6 816], 816 ms past its waitMs + 1 s.
  const peakPoll = [log("w1", [poll(0, 6_816)])];

  it("count a late poll apart when a sampler read in flight during its overtime took longer than its lateness", () => {
    const check = checkPollTimes(peakPoll, null, { alarmsOverdueMs: 574, roundTrips: [[3_000, 3_020], [4_500, 6_200], [6_500, 6_510]] });
    assert.equal(check.status, "pass");
    assert.match(check.detail, /1 late \(1 of them within the runtime's own lateness: alarms up to 574 ms overdue, the front door's round trips up to 1700 ms at those moments\)/);
  });

  it("fail the same poll when the slow reads were all outside its overtime window, naming both figures", () => {
    const check = checkPollTimes(peakPoll, null, { alarmsOverdueMs: 574, roundTrips: [[1_000, 4_999], [6_817, 9_000], [5_500, 5_520]] });
    assert.equal(check.status, "fail");
    assert.deepEqual(check.data?.violations, [{ kind: "poll answered late", workerId: "w1", start: 0, tookMs: 6_816, waitMs: 5_000, status: 200, tasks: 0, error: undefined, alarmsOverdueMs: 574, roundTripMs: 20 }]);
  });

  it("fail a late poll whose overlapping reads took less than its lateness past waitMs + 1 s", () => {
    assert.equal(pollAllowance(peakPoll[0]!.polls[0]!, { alarmsOverdueMs: 574, roundTrips: [[5_200, 5_700]] }).allowanceMs, 574);
    assert.equal(checkPollTimes(peakPoll, null, { alarmsOverdueMs: 574, roundTrips: [[5_000, 5_815]] }).status, "fail");
    assert.equal(checkPollTimes(peakPoll, null, { alarmsOverdueMs: 574, roundTrips: [[5_000, 5_816]] }).status, "pass");
  });

  it("take the longest round trip of the reads overlapping a window, touching its ends included", () => {
    const trips = [[0, 100], [90, 400], [400, 450], [500, 2_000]] as const;
    assert.equal(longestRoundTripIn(trips, 100, 400), 310);
    assert.equal(longestRoundTripIn(trips, 2_000, 3_000), 1_500);
    assert.equal(longestRoundTripIn(trips, 2_001, 3_000), 0);
  });

  it("count a poll that had hung past its waitMs + 1 s before the kill as late, not as the restart's", () => {
    assert.equal(pollOutcome(poll(0, 12_000, [], 0), { from: 7_000, to: 9_000 }), "late");
    assert.equal(pollOutcome(poll(3_000, 4_500, [], 0), { from: 7_000, to: 9_000 }), "cut by the restart");
  });
});

describe("the workers' logs", () => {
  it("read poll and task lines, counting a line the SIGKILL cut as unreadable", () => {
    const text = [JSON.stringify(poll(0, 10, [task("fetch")])), JSON.stringify(done(task("fetch"), "w", 600)), '{"type":"poll","start":1'].join("\n");
    const read = readWorkerLog("w", text);
    assert.deepEqual([read.polls.length, read.tasks.length, read.unreadable], [1, 1, 1]);
  });

  it("count the tasks an announcement names, and nothing for any other output", () => {
    assert.equal(holdingCount(JSON.stringify({ holding: [task("fetch"), task("resize")] })), 2);
    assert.equal(holdingCount("(node:1) ExperimentalWarning: something"), 0);
  });
});
