// When the list's line (triage.ts) costs an index write: played as the object's shell plays a workflow (each
// transition, then its commit plan), counting the index entries the commits write against those the status and
// lease rules alone would write (the rules before the list had lines).
import { describe, expect, it } from "vitest";
import type { WorkflowPlan } from "../../src/domain/language/plan";
import { commitPlan, nextDeadlineAt, type WorkflowEvent } from "../../src/domain/machine";
import { indexNeedsEntry, type IndexEntry } from "../../src/domain/machine/index-entry";
import type { Transitioned } from "../../src/domain/machine/commit-plan";
import type { WorkflowState } from "../../src/domain/machine/state";
import { claimed, deadlinesReached, eventReceived, failed, plan, Run, sleepStep, step, succeeded, wait, waitStep, type Script } from "./builders";

/** A workflow played commit by commit: the entries written, and how many the status and lease rules alone ask for. */
class IndexedRun {
  readonly run: Run;
  readonly written: IndexEntry[] = [];
  byStatusAndLease = 0;

  constructor(workflowPlan: WorkflowPlan) {
    this.run = new Run(workflowPlan);
    this.commit(undefined, { state: this.run.state, effects: [], history: [] });
  }

  play(script: Script): this {
    for (const item of script) {
      if ("wait" in item) this.run.wait(item.wait);
      else this.send(item);
    }
    return this;
  }

  private send(event: WorkflowEvent): void {
    const before = this.run.state;
    this.commit(before, this.run.send(event));
  }

  private commit(previous: WorkflowState | undefined, result: Transitioned): void {
    const { now } = this.run;
    if (indexNeedsEntry(previous, result.state, nextDeadlineAt(result.state), now)) this.byStatusAndLease += 1;
    for (const effect of commitPlan(previous, result, now).effects) if (effect.type === "WriteIndexEntry") this.written.push(effect.entry);
  }

  /** Each entry written: its status and its line. */
  lines(): string[] {
    return this.written.map((entry) => `${entry.status}${entry.triage ? `: ${entry.triage.summary}` : ""}`);
  }
}

const threeSteps = plan([step("reserve"), step("charge"), step("ship")]);
const happyPath: Script = [claimed("reserve"), succeeded("reserve"), claimed("charge"), succeeded("charge"), claimed("ship"), succeeded("ship")];

describe("the list's line in the index entry", () => {
  it("costs a workflow whose steps succeed first time no write: three steps write the start and the end, as before", () => {
    const played = new IndexedRun(threeSteps).play(happyPath);

    expect(played.run.state.status).toBe("completed");
    expect(played.lines()).toEqual(["running", "completed"]);
    expect(played.written).toHaveLength(played.byStatusAndLease);
  });

  it("costs a sleep none either: it ends by itself", () => {
    const played = new IndexedRun(plan([step("a"), sleepStep("nap", { durationMs: 1_000 }), step("b")])).play([claimed("a"), succeeded("a"), wait(1_000), deadlinesReached(), claimed("b"), succeeded("b")]);

    expect(played.lines()).toEqual(["running", "completed"]);
    expect(played.written).toHaveLength(played.byStatusAndLease);
  });

  it("is written when a retry is scheduled, not when it starts, and cleared when the step succeeds", () => {
    const played = new IndexedRun(threeSteps).play([
      claimed("reserve"),
      failed("reserve"),
      wait(100),
      deadlinesReached(),
      claimed("reserve", 2),
      failed("reserve", 2),
      wait(200),
      deadlinesReached(),
      claimed("reserve", 3),
      succeeded("reserve", 3),
      ...happyPath.slice(2),
    ]);

    expect(played.lines()).toEqual(["running", "running: retrying reserve 2/3 after 503", "running: retrying reserve 3/3 after 503", "running", "completed"]);
    expect(played.byStatusAndLease).toBe(2);
    expect(played.written[1]?.triage).toEqual({ summary: "retrying reserve 2/3 after 503", stepId: "reserve", attempts: { used: 2, max: 3 }, nextDeadlineAt: played.written[1]!.updatedAt + 100 });
  });

  it("is written when a wait for an event begins and when the event ends it", () => {
    const played = new IndexedRun(plan([step("a"), waitStep("approve", { event: "approved", timeoutMs: 60_000 }), step("b")])).play([
      claimed("a"),
      succeeded("a"),
      eventReceived("approved"),
      claimed("b"),
      succeeded("b"),
    ]);

    expect(played.lines()).toEqual(["running", "running: waiting for event approved", "running", "completed"]);
  });

  it("rides on the start's own write when the first step waits", () => {
    const played = new IndexedRun(plan([waitStep("approve", { event: "approved", timeoutMs: 60_000 })]));

    expect(played.lines()).toEqual(["running: waiting for event approved"]);
    expect(played.run.state.indexedSummary).toBe("waiting for event approved");
  });

  it("is gone from an ended workflow's entry, which the end writes anyway", () => {
    const played = new IndexedRun(plan([step("a", { retry: { maxAttempts: 2, initialIntervalMs: 100 } })], { onFailure: "fail" })).play([
      claimed("a"),
      failed("a"),
      wait(100),
      deadlinesReached(),
      claimed("a", 2),
      failed("a", 2),
    ]);

    expect(played.run.state.status).toBe("failed");
    expect(played.lines()).toEqual(["running", "running: retrying a 2/2 after 503", "failed"]);
    expect(played.written.at(-1)).not.toHaveProperty("triage");
    expect(played.run.state.indexedSummary).toBeUndefined();
  });
});
