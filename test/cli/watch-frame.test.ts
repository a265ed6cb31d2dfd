import { describe, expect, it } from "vitest";
import type { StepView, WorkflowView } from "../../src/cli/api-types";
import { changeLines, frameLines, progressBar, progressOf } from "../../src/cli/watch/frame";

const NOW = Date.UTC(2026, 0, 1);

/** A step with the fields the frame reads; the rest of the view (kind, dependsOn, ...) plays no part. */
function step(id: string, status: StepView["status"], fields: Partial<StepView> = {}): StepView {
  return { id, status, attempt: status === "pending" ? 0 : 1, attempts: [], ...fields } as StepView;
}

function workflow(status: WorkflowView["status"], steps: StepView[], fields: Partial<WorkflowView> = {}): WorkflowView {
  return { id: "order-1", name: "order", status, input: {}, createdAt: NOW - 5_000, updatedAt: NOW, redriveCount: 0, pendingEvents: [], steps, ...fields };
}

describe("the progress of a watched workflow", () => {
  it("counts the steps that settled, failed and cancelled ones included", () => {
    const view = workflow("compensating", [step("a", "compensated"), step("b", "failed"), step("c", "cancelled"), step("d", "compensating"), step("e", "pending")]);
    expect(progressOf(view)).toEqual({ settled: 3, total: 5 });
  });

  it.each([
    [{ settled: 0, total: 3 }, `[${"░".repeat(24)}] 0/3`],
    [{ settled: 1, total: 3 }, `[${"█".repeat(8)}${"░".repeat(16)}] 1/3`],
    [{ settled: 3, total: 3 }, `[${"█".repeat(24)}] 3/3`],
  ])("draws %o as a bar", (progress, bar) => {
    expect(progressBar(progress)).toBe(bar);
  });
});

describe("the terminal frame", () => {
  it("shows the workflow with its bar, then one line per step with what it waits for", () => {
    const view = workflow("running", [step("reserve", "succeeded", { output: { id: "r1" } }), step("approve", "waiting", { waitingFor: { event: "approved", timeoutAt: NOW + 60_000 } })]);
    expect(frameLines(view, NOW, 200)).toEqual([
      `order-1 (order)  running  [${"█".repeat(12)}${"░".repeat(12)}] 1/2`,
      '  ✓ reserve  succeeded    attempt 1  {"id":"r1"}',
      '  … approve  waiting      attempt 1  for event "approved" (gives up in 1m 00s)',
    ]);
  });

  it("clips lines to the terminal's width, so a redraw never has to count wrapped lines", () => {
    const view = workflow("running", [step("charge", "retrying", { nextRetryAt: NOW + 2_000, error: { message: "x".repeat(300) } })]);
    for (const line of frameLines(view, NOW, 60)) expect(line.length).toBeLessThanOrEqual(59);
  });

  it("says when a workflow needs an operator, and the commands that move it on", () => {
    const view = workflow("needs_attention", [step("ship", "failed", { error: { message: "declined" } })], { error: { message: 'step "ship" failed' } });
    expect(frameLines(view, NOW, 200).slice(2)).toEqual([
      '  error: step "ship" failed',
      "  needs an operator: retry or skip the failed step, or compensate",
      "    shepherd retry-step order-1 ship",
      "    shepherd skip-step order-1 ship --output '<json>'",
      "    shepherd compensate order-1",
    ]);
  });

  it("says how to resume a paused workflow", () => {
    const view = workflow("paused", [step("ship", "pending")]);
    expect(frameLines(view, NOW, 200).slice(2)).toEqual(["  paused until resumed", "    shepherd resume order-1"]);
  });
});

describe("the lines a pipe gets", () => {
  const first = workflow("running", [step("reserve", "running"), step("ship", "pending")]);

  it("prints the workflow and every step the first time", () => {
    expect(changeLines(undefined, first, NOW)).toEqual(["workflow order-1 (order): running, 0/2 steps settled", "step reserve: running, attempt 1", "step ship: pending"]);
  });

  it("then one line per step whose status or attempt moved, and the workflow's own change", () => {
    const later = workflow("completed", [step("reserve", "succeeded", { output: { id: "r1" } }), step("ship", "succeeded", { attempt: 2 })]);
    expect(changeLines(first, later, NOW)).toEqual([
      'step reserve: succeeded, attempt 1: {"id":"r1"}',
      "step ship: succeeded, attempt 2",
      "workflow order-1: completed, 2/2 steps settled",
    ]);
  });

  it("prints nothing when only time passed", () => {
    const waiting = workflow("running", [step("approve", "waiting", { waitingFor: { event: "approved", timeoutAt: NOW + 60_000 } })]);
    expect(changeLines(waiting, waiting, NOW + 30_000)).toEqual([]);
  });
});

describe("a map and a child workflow in watch", () => {
  const items = (succeeded: number, failed: number) => ({ total: 1000, pending: 1000 - succeeded - failed, running: 0, succeeded, failed, skipped: 0 });

  it("shows a map's counts on its line of the frame, and a child's parent under the workflow", () => {
    const view = workflow("running", [step("thumbs", "running", { items: items(412, 3) })], { parent: { id: "batch-1", stepId: "images" } } as Partial<WorkflowView>);
    expect(frameLines(view, NOW, 200).slice(1)).toEqual(["  parent: batch-1 (step images)", "  ▶ thumbs  running      attempt 1  412/1000 succeeded, 3 failed"]);
  });

  it("prints a line into a pipe each time a map's counts move, though its status did not", () => {
    const before = workflow("running", [step("thumbs", "running", { items: items(10, 0) })]);
    const after = workflow("running", [step("thumbs", "running", { items: items(20, 1) })]);
    expect(changeLines(before, after, NOW)).toEqual(["step thumbs: running, attempt 1: 20/1000 succeeded, 1 failed"]);
    expect(changeLines(after, after, NOW)).toEqual([]);
  });

  it("prints a line when a child workflow's status moves", () => {
    const child = (status: string) => workflow("running", [step("ship", "running", { child: { id: "order-1:ship", status } } as Partial<StepView>)]);
    expect(changeLines(child("running"), child("completed"), NOW)).toEqual(["step ship: running, attempt 1: child order-1:ship completed"]);
  });
});
