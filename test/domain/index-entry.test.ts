import { describe, expect, it } from "vitest";
import { INDEX_WATCHDOG_MS, indexedDeadlineOf, indexEntryOf, indexNeedsEntry } from "../../src/domain/machine/index-entry";
import { nextDeadlineAt } from "../../src/domain/machine";
import { claimed, failedPermanently, plan, Run, step, succeeded } from "./builders";

describe("the index entry of a workflow", () => {
  it("carries the date it is given (the object's lease) while the workflow runs", () => {
    const run = new Run(plan([step("a")]));
    expect(indexEntryOf(run.state, 12_345)).toMatchObject({ status: "running", nextDeadlineAt: 12_345, version: run.state.version });
  });

  it("gives an open workflow with no deadline (waiting on an operator) a watchdog date an hour on, so the sweep still looks at it", () => {
    const run = new Run(plan([step("a")], { onFailure: "escalate" }));
    run.send(claimed("a"));
    run.send(failedPermanently("a"));
    expect(run.state.status).toBe("needs_attention");
    expect(indexEntryOf(run.state, indexedDeadlineOf(run.state, undefined, run.state.updatedAt)).nextDeadlineAt).toBe(run.state.updatedAt + INDEX_WATCHDOG_MS);
  });

  it("has no deadline once the workflow has ended", () => {
    const run = new Run(plan([step("a")]));
    run.send(claimed("a"));
    run.send(succeeded("a"));
    expect(run.state.status).toBe("completed");
    expect(indexEntryOf(run.state, run.now)).not.toHaveProperty("nextDeadlineAt");
    expect(indexEntryOf(run.state, run.now).endedAt).toBe(run.state.endedAt);
  });

  it("is written at the start and on every status change, not on other transitions", () => {
    const run = new Run(plan([step("a"), step("b")]));
    const started = run.state;
    expect(indexNeedsEntry(undefined, started, nextDeadlineAt(started), run.now)).toBe(true);
    run.send(claimed("a"));
    expect(indexNeedsEntry(started, run.state, nextDeadlineAt(run.state), run.now)).toBe(false);
    const before = run.state;
    run.send(succeeded("a"));
    run.send(claimed("b"));
    run.send(succeeded("b"));
    expect(indexNeedsEntry(before, run.state, nextDeadlineAt(run.state), run.now)).toBe(true);
  });
});
