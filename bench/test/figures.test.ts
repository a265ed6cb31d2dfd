// Figures the cases compute from what they read: Shepherd's answers narrowed, the burst's queue lag and
// attempts per step from the workflows' views, the mixed case's slow steps, a step's time split into hops.
// Plain Node (the bench is a Node tool, outside the Workers test projects): `node --test bench/test/*.test.ts`.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { RequestRecord } from "../../scripts/lib/fake-remote.ts";
import { viewFigures } from "../lib/burst.ts";
import { splitIntoHops } from "../lib/cases.ts";
import type { HopSamples } from "../lib/cases.ts";
import type { StepView, WorkflowStatus } from "../lib/engines/engine.ts";
import { workflowStatus } from "../lib/engines/shepherd-answers.ts";
import { slowStepPaths } from "../lib/throughput.ts";

describe("Shepherd's workflow view, as the cases read it", () => {
  it("takes the status, the completion stamp and each attempt's times and timeout from the view", () => {
    const body = {
      status: "completed",
      endedAt: 1500,
      steps: [{ id: "s1", status: "succeeded", attempts: [{ n: 1, kind: "action", scheduledAt: 1000, startedAt: 1010, endedAt: 1200, error: { timeout: "schedule_to_start" } }] }],
    };
    assert.deepEqual(workflowStatus(200, body, ""), {
      state: "completed",
      terminal: true,
      completed: true,
      endedAt: 1500,
      steps: [{ status: "succeeded", attempts: [{ kind: "action", scheduledAt: 1000, startedAt: 1010, endedAt: 1200, timeout: "schedule_to_start" }] }],
    });
  });

  it("says a workflow not found yet is not over, and any other failed read is (the read-back tells them apart by state)", () => {
    assert.deepEqual(workflowStatus(404, undefined, "not found"), { state: "http_404", terminal: false, completed: false, error: "not found" });
    assert.equal(workflowStatus(500, undefined, "").terminal, true);
    assert.equal(workflowStatus(200, { status: "running" }, "").terminal, false);
  });
});

describe("viewFigures", () => {
  const ended = (completed: boolean, ...steps: StepView[]): WorkflowStatus => ({ state: completed ? "completed" : "failed", terminal: true, completed, steps });

  it("takes the first attempt's queue lag, counting one that timed out unclaimed until its timeout", () => {
    const figures = viewFigures([
      ended(true, { attempts: [{ kind: "action", scheduledAt: 0, startedAt: 40 }] }),
      ended(false, { attempts: [{ kind: "action", scheduledAt: 0, endedAt: 900, timeout: "schedule_to_start" }] }),
    ]);
    assert.equal(figures.queueLagP50Ms, 40);
    assert.equal(figures.queueLagP99Ms, 900);
    assert.equal(figures.schedToStartTimeouts, 1);
  });

  it("counts the action attempts per step over the completed workflows only", () => {
    const retried = { attempts: [{ kind: "action", scheduledAt: 0, startedAt: 1 }, { kind: "action", scheduledAt: 5, startedAt: 6 }] };
    const once = { attempts: [{ kind: "action", scheduledAt: 0, startedAt: 1 }, { kind: "compensation", scheduledAt: 9, startedAt: 9 }] };
    assert.equal(viewFigures([ended(true, retried, once), ended(false, retried, retried)]).attemptsPerStep, 1.5);
  });

  it("has no figure for an engine without views", () => {
    assert.deepEqual(viewFigures([{ state: "complete", terminal: true, completed: true }]), {
      queueLagP50Ms: undefined, queueLagP99Ms: undefined, schedToStartTimeouts: undefined, attemptsPerStep: undefined,
    });
  });
});

describe("slowStepPaths", () => {
  it("makes exactly the asked share of the run's steps slow, and none without a share", () => {
    const paths = (fraction: number): string[] =>
      Array.from({ length: 20 }, (_, workflow) => Array.from({ length: 5 }, (_, step) => slowStepPaths(fraction)(workflow)(step))).flat();
    assert.equal(paths(0.1).filter((path) => path === "/slow?ms=5000").length, 10);
    assert.equal(paths(0.25).filter((path) => path === "/slow?ms=5000").length, 25);
    assert.ok(Array.from({ length: 5 }, (_, step) => slowStepPaths(0)(3)(step)).every((path) => path === "/ok"));
  });
});

describe("splitIntoHops", () => {
  it("splits each step's first attempt at its history stamps and the remote's arrival and answer", () => {
    const events = [
      { type: "workflow_started", at: 105 },
      { type: "step_scheduled", stepId: "s1", attempt: 1, at: 110 },
      { type: "step_started", stepId: "s1", attempt: 1, at: 130 },
      { type: "step_succeeded", stepId: "s1", attempt: 1, at: 175 },
    ];
    const request: RequestRecord = { method: "POST", path: "/ok", attempt: 1, arrivedAt: 140, status: 200, respondedAt: 150 };
    const remote = { requestsFor: (key: string) => (key === "wf:s1" ? [request] : []) };
    const samples: HopSamples = { accept: [], queueHop: [], claimToRemote: [], remoteToReport: [] };
    splitIntoHops(events, "wf", 100, remote, samples);
    assert.deepEqual(samples, { accept: [5], queueHop: [20], claimToRemote: [10], remoteToReport: [25] });
  });
});
