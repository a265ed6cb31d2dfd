import { describe, expect, it } from "vitest";
import { toWorkflowView } from "../../src/domain/machine/view";
import { claimed, failed, heartbeat, plan, Run, step, T0, wait } from "./builders";

describe("toWorkflowView", () => {
  it("shows the public fields of a workflow and hides the scheduler's bookkeeping", () => {
    const run = new Run(plan([step("a"), step("b")], { timeoutMs: 60_000 }), { id: "wf-view", input: { amount: 1 } });
    run.play([wait(10), claimed("a"), heartbeat("a", 1, { value: { page: 1 } }), wait(5), failed("a")]);

    expect(toWorkflowView(run.state)).toEqual({
      id: "wf-view",
      name: "test-flow",
      status: "running",
      input: { amount: 1 },
      createdAt: T0,
      updatedAt: T0 + 15,
      redriveCount: 0,
      pendingEvents: [],
      steps: [
        {
          id: "a",
          kind: "action",
          dependsOn: [],
          status: "retrying",
          attempt: 1,
          error: { message: "HTTP 503", retryable: true, status: 503 },
          nextRetryAt: T0 + 115,
          lastHeartbeatAt: T0 + 10,
          progress: { page: 1 },
          attempts: [
            {
              n: 1,
              kind: "action",
              status: "failed",
              scheduledAt: T0,
              startedAt: T0 + 10,
              endedAt: T0 + 15,
              error: { message: "HTTP 503", retryable: true, status: 503 },
            },
          ],
        },
        // Its dependency comes from the plan: absent in the definition, it is the step before.
        { id: "b", kind: "action", dependsOn: ["a"], status: "pending", attempt: 0, attempts: [] },
      ],
    });
  });

  it("shows the definition the workflow runs, and nothing for one stored before the registry", () => {
    const run = new Run(plan([step("a")]), { id: "wf-pinned" });
    const definition = { name: "test-flow", version: 2, hash: "ab".repeat(32) };

    expect(toWorkflowView({ ...run.state, definition }).definition).toEqual(definition);
    expect(toWorkflowView({ ...run.state, definition: { name: "test-flow", hash: "cd".repeat(32) } }).definition).toEqual({ name: "test-flow", hash: "cd".repeat(32) });
    expect(toWorkflowView(run.state)).not.toHaveProperty("definition");
  });
});
