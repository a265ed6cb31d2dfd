// The bulk phase's checks (case 34) against the facts they read: the finals of the family, the job's readings, and
// the front door's answers around the restart's outage.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { BulkJobView, HistoryEvent, WorkflowView } from "../lib/api-shapes.ts";
import { BULK_NAME, buildBulkWorkflows } from "../lib/bulk.ts";
import type { BulkRun, FrontDoorProbe, JobSample } from "../lib/bulk-driver.ts";
import { bulkReport, bulkRows } from "../lib/bulk-report.ts";
import { checkBulk, checkBulkCounts, checkCancelledOnce, checkFrontDoor, checkRestartDuringJob } from "../lib/checks/bulk.ts";
import type { Final } from "../lib/finals.ts";

const workflows = buildBulkWorkflows({ seed: "1", count: 3 });
const outage = { from: 10_000, to: 14_000 };

const cancel = (at: number): HistoryEvent => ({ at, type: "operator_action", data: { action: "cancel" } });
function final(id: string, status: string, events: HistoryEvent[]): Final {
  const view: WorkflowView = { id, name: BULK_NAME, status, steps: [], createdAt: 0, updatedAt: 0 };
  return { id, kind: "bulk", started: true, view, readStatus: 200, events, language: undefined };
}
const cancelledOnce = (): Final[] => workflows.map((wf) => final(wf.id, "cancelled", [{ at: 1, type: "workflow_started" }, cancel(2), { at: 3, type: "workflow_cancelled" }]));

const job = (fields: Partial<BulkJobView> = {}): BulkJobView => ({ id: "job-1", action: "cancel", status: "done", matched: 3, done: 3, failed: 0, errors: [], createdAt: 8_000, endedAt: 20_000, ...fields });
const sample = (at: number, counts: Partial<NonNullable<JobSample["job"]>> | null): JobSample => ({ at, httpStatus: counts ? 200 : 0, job: counts && { status: "running", matched: 3, done: 0, failed: 0, ...counts } });
const probe = (at: number, status = 200, ms = 40): FrontDoorProbe => ({ at, ms, status, error: status ? null : "ECONNREFUSED" });

function run(fields: Partial<BulkRun> = {}): BulkRun {
  return {
    results: [],
    listedAt: 5_000,
    created: job({ status: "running", done: 0, endedAt: undefined }),
    createError: null,
    atKill: sample(9_900, { done: 1 }),
    samples: [sample(9_000, { done: 0 }), sample(9_900, { done: 1 }), sample(12_000, null), sample(16_000, { done: 2 }), sample(20_000, { status: "done", done: 3 })],
    probes: [probe(8_500), probe(9_950, 0, 5_000), probe(12_000, 0), probe(14_500, 0), probe(16_000)],
    final: job(),
    ...fields,
  };
}

describe("the bulk family", () => {
  it("is workflows of one definition that only a cancel ends, left out of the progress threshold", () => {
    assert.deepEqual(workflows.map((wf) => wf.id), ["chaos-1-bulk-0001", "chaos-1-bulk-0002", "chaos-1-bulk-0003"]);
    assert.ok(workflows.every((wf) => wf.closedByDesign && wf.payload.definition.name === BULK_NAME && wf.payload.definition.steps[0]?.waitForEvent));
  });
});

describe("the bulk checks", () => {
  it("pass a job that cancelled each workflow once across the restart, its counts adding up, the front door answering", () => {
    const checks = checkBulk(workflows, run(), cancelledOnce(), { outage, restartAsked: true });
    assert.deepEqual(checks.map((c) => [c.name, c.status]), [
      ["bulk job: each matching workflow cancelled exactly once", "pass"],
      ["bulk job: counts add up", "pass"],
      ["bulk job: Shepherd's restart came while it ran (case 34)", "pass"],
      ["bulk job: the front door answered throughout", "pass"],
    ]);
  });

  it("fail a workflow left running, one cancelled twice, and one cancelled with no cancel of its own", () => {
    const [a, b, c] = workflows.map((wf) => wf.id) as [string, string, string];
    const check = checkCancelledOnce(workflows, [final(a, "running", []), final(b, "cancelled", [cancel(1), cancel(2)]), final(c, "cancelled", [])]);
    assert.equal(check.status, "fail");
    assert.deepEqual((check.data?.violations as { kind: string }[]).map((v) => v.kind), ["not cancelled", "cancelled more than once", "cancelled with no cancel in its history"]);
  });

  it("fail counts that do not add up at the end, or that went back between two readings", () => {
    const kinds = (r: BulkRun) => (checkBulkCounts(r, 3).data?.violations as { kind: string }[]).map((v) => v.kind);
    assert.deepEqual(kinds(run({ final: job({ matched: 4, done: 3, failed: 0 }) })), ["matched is not the family", "done + failed ≠ matched"]);
    assert.deepEqual(kinds(run({ final: job({ done: 2, failed: 1, errors: [{ workflowId: "x", code: "conflict", message: "ended" }] }) })), ["workflows refused the cancel"]);
    assert.deepEqual(kinds(run({ final: job({ status: "running", done: 2 }) })), ["the job did not end", "done + failed ≠ matched"]);
    assert.deepEqual(kinds(run({ samples: [sample(1, { done: 2 }), sample(2, { done: 1 })] })), ["a count went back"]);
    assert.deepEqual(kinds(run({ samples: [sample(1, { done: 3, failed: 1 })] })), ["a reading counted more than it matched"]);
    assert.deepEqual(kinds(run({ created: null, final: null, createError: "POST /v1/bulk answered 503" })), ["the job was never created"]);
  });

  it("fail case 34 when the job was created after the kill, or when the asked restart never came; pass a run without one", () => {
    assert.equal(checkRestartDuringJob(run({ created: job({ createdAt: 15_000 }) }), outage, true).status, "fail");
    assert.equal(checkRestartDuringJob(run({ final: job({ endedAt: 9_000 }) }), outage, true).status, "fail");
    assert.equal(checkRestartDuringJob(run(), null, true).status, "fail");
    assert.equal(checkRestartDuringJob(run(), null, false).status, "pass");
  });

  it("leave out the front door's answers during the outage and its grace, and fail one refused outside it", () => {
    const ok = checkFrontDoor(run().probes, outage);
    assert.match(ok.detail, /^2\/2 answered \(3 during the restart apart\)/);
    const refused = checkFrontDoor([...run().probes, probe(17_000, 503)], outage);
    assert.equal(refused.status, "fail");
    assert.equal(checkFrontDoor([], outage).status, "fail");
  });
});

describe("the bulk phase in the report", () => {
  it("gives the job's course, its pace and the front door's answers", () => {
    const figures = bulkReport(workflows, run(), cancelledOnce(), outage, 0);
    assert.ok(figures);
    assert.deepEqual(figures.outcomes, { cancelled: 3 });
    assert.deepEqual(figures.job, { id: "job-1", createdAtMs: 8_000, endedAtMs: 20_000, matched: 3, done: 3, failed: 0 });
    assert.equal(figures.perSecond, 0.3);
    assert.deepEqual(figures.frontDoor, { asked: 5, unanswered: 3, duringRestart: 2, latencyMs: figures.frontDoor.latencyMs });
    assert.equal(bulkRows(figures).length, 4);
    assert.deepEqual(bulkRows(null), [["bulk phase (case 34)", "none (--bulk-workflows 0)"]]);
  });
});
