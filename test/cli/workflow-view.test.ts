import { describe, expect, it } from "vitest";
import type { StepView, WorkflowView } from "../../src/cli/api-types";
import { itemsDetail, stepDetail, workflowLines, workflowListLines } from "../../src/cli/views/workflow";

const NOW = Date.UTC(2026, 0, 1);

function step(id: string, kind: StepView["kind"], status: StepView["status"], fields: Record<string, unknown> = {}): StepView {
  return { id, kind, dependsOn: [], status, attempt: status === "pending" ? 0 : 1, attempts: [], ...fields } as StepView;
}

function workflow(steps: StepView[], fields: Record<string, unknown> = {}): WorkflowView {
  return { id: "batch-1", name: "batch", status: "running", input: {}, createdAt: NOW - 5_000, updatedAt: NOW, redriveCount: 0, pendingEvents: [], steps, ...fields } as WorkflowView;
}

const counts = (fields: Partial<NonNullable<StepView["items"]>>) => ({ total: 1000, pending: 0, running: 0, succeeded: 0, failed: 0, skipped: 0, ...fields });

describe("a map step in `shepherd get`", () => {
  it("shows the kind and the items' counts, never the items", () => {
    const lines = workflowLines(workflow([step("thumbs", "map", "running", { items: counts({ succeeded: 412, failed: 3, running: 50, pending: 535 }) })]), NOW);
    expect(lines).toContain("thumbs  map   running  1        412/1000 succeeded, 3 failed, 50 running");
    expect(lines.find((line) => line.startsWith("STEP"))).toBe("STEP    KIND  STATUS   ATTEMPT  DETAIL");
  });

  it.each([
    [counts({ succeeded: 1000 }), undefined, "1000/1000 succeeded"],
    [counts({ succeeded: 998, failed: 2 }), undefined, "998/1000 succeeded, 2 failed"],
    [counts({ succeeded: 6, failed: 2, total: 8 }), "2 of 8 items failed for good", "6/8 succeeded, 2 failed: 2 of 8 items failed for good"],
    [counts({ total: 0 }), undefined, "0/0 succeeded"],
  ])("words %o as the step's detail", (items, error, words) => {
    expect(itemsDetail(items, error)).toBe(words);
  });
});

describe("child workflows in `shepherd get`", () => {
  it("shows the child a workflow step started, and where it stands", () => {
    expect(stepDetail(step("ship", "action", "running", { child: { id: "batch-1:ship", status: "running" } }), NOW)).toBe("child batch-1:ship running");
  });

  it("names the parent of a child workflow and the step that started it", () => {
    const lines = workflowLines(workflow([], { id: "batch-1:ship", parent: { id: "batch-1", stepId: "ship" } }), NOW);
    expect(lines).toContain("parent:     batch-1 (step ship)");
  });
});

describe("a scheduled workflow in `shepherd get` and `shepherd list`", () => {
  it("says when it starts, and afterwards when it was scheduled for", () => {
    const startAt = NOW + 90 * 60_000;
    const waiting = workflowLines(workflow([step("charge", "action", "pending")], { status: "scheduled", startAt }), NOW);
    const started = workflowLines(workflow([step("charge", "action", "running")], { startAt }), startAt + 1_000);

    expect(waiting.find((line) => line.startsWith("starts:"))).toMatch(/^starts: +2026-01-01T01:30:00Z \(in 1h 30m\)$/);
    expect(started.find((line) => line.startsWith("scheduled for:"))).toMatch(/2026-01-01T01:30:00Z$/);
    expect(started.some((line) => line.startsWith("starts:"))).toBe(false);
  });

  it("lists a scheduled workflow with its start time in the status column", () => {
    const row = { id: "later-1", name: "batch", status: "scheduled" as const, createdAt: NOW, updatedAt: NOW, startAt: NOW + 60_000 };
    expect(workflowListLines({ workflows: [row] })[1]).toMatch(/^later-1 +batch +scheduled, starts 2026-01-01T00:01:00Z +2026/);
  });
});

describe("why a workflow is worth a look in `shepherd list`", () => {
  const row = { id: "order-7", name: "order", status: "running" as const, createdAt: NOW - 60_000, updatedAt: NOW - 60_000 };

  it.each([
    { name: "a retry, and when it starts", fields: { summary: "retrying notify 6/8 after 503", stepId: "notify", attempts: { used: 6, max: 8 }, nextDeadlineAt: NOW + 30_000 }, why: "retrying notify 6/8 after 503 · next in 30.0s" },
    { name: "a wait for an event, and when it gives up", fields: { summary: "waiting for event approved", stepId: "approve", nextDeadlineAt: NOW + 3_600_000 }, why: "waiting for event approved · next in 1h 00m" },
    { name: "a failure waiting on an operator, with no deadline", fields: { summary: "needs attention: charge failed (422)", stepId: "charge", attempts: { used: 3, max: 3 } }, why: "needs attention: charge failed (422)" },
    { name: "nothing for a workflow simply running", fields: {}, why: "" },
  ])("$name", ({ fields, why }) => {
    const [header, line] = workflowListLines({ workflows: [{ ...row, ...fields }] }, NOW);
    expect(header).toMatch(/ENDED +WHY$/);
    expect(line!.slice(header!.indexOf("WHY"))).toBe(why);
  });

  it("says when an ended workflow ended", () => {
    const [, line] = workflowListLines({ workflows: [{ ...row, status: "completed", endedAt: NOW - 1_000 }] }, NOW);
    expect(line).toMatch(/completed +2025-12-31T23:59:00Z +2025-12-31T23:59:59Z$/);
  });
});
