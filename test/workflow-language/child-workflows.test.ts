// The `workflow` step through the real objects: the parent's outbox starts the child through the same start path
// as POST /v1/workflows, the child is an ordinary workflow (its own object, listed, controllable), its end reaches
// the parent as a notice from its own outbox, and the parent's cancel or terminate reaches the child.
import { afterEach, describe, expect, it, vi } from "vitest";
import { api, getWorkflow, historyOf, start, uniqueId, waitForStatus } from "../helpers/api";
import { FAST } from "../helpers/policies";
import { httpStep, json, mockRemote } from "../helpers/remote";
import { publishNew } from "../helpers/registry";
import { control, DAY, sendEvent, stepOf, waitStep } from "../helpers/workflow-language";

afterEach(() => vi.restoreAllMocks());

/** A child definition that waits for the event "go" (so a test decides when it ends), then echoes its input. */
const waitingChild = { name: "waits-for-go", steps: [waitStep("go", { event: "go", timeoutMs: DAY })] };

function parentWith(workflow: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  return { name: "parent", defaults: FAST, steps: [{ id: "ship", workflow, ...extra }] };
}

describe("a child workflow that completes", () => {
  it("starts by definitionRef with its rendered input, runs as an ordinary listed workflow, and its output becomes the step's", async () => {
    mockRemote((call) => json({ tracking: `trk-${String(call.body.step)}` }));
    const name = uniqueId("shipping");
    await publishNew({ name, defaults: FAST, steps: [httpStep("label")] }, 1);
    const { id } = await start(
      { name: "order", defaults: FAST, steps: [{ id: "ship", workflow: { definitionRef: { name }, input: { order: "{{ input.order }}" } } }, httpStep("notify")] },
      { input: { order: 42 } },
    );
    const childId = `${id}:ship`;

    const parent = await waitForStatus(id, "completed");
    expect(stepOf(parent, "ship")).toMatchObject({ status: "succeeded", output: { label: { tracking: "trk-label" } }, child: { id: childId, status: "completed" } });
    const child = await getWorkflow(childId);
    expect(child).toMatchObject({ status: "completed", input: { order: 42 }, parent: { id, stepId: "ship" }, definition: { name, version: 1 } });
    expect((await historyOf(id)).filter((event) => event.stepId === "ship").map((event) => event.type)).toEqual([
      "step_waiting_for_child",
      "child_workflow_started",
      "child_workflow_ended",
      "step_succeeded",
    ]);

    await vi.waitFor(async () => {
      const listed = await api("GET", `/v1/workflows?parentId=${id}`);
      expect(listed.body.workflows).toEqual([expect.objectContaining({ id: childId, parentId: id, status: "completed" })]);
    });
    expect((await api("GET", `/v1/workflows?parentId=${uniqueId("nobody")}`)).body.workflows).toEqual([]);
  });
});

describe("a child workflow that does not complete", () => {
  it("fails the parent's step with the child's error, for good", async () => {
    mockRemote(() => json({ error: "declined" }, 422));
    const { id } = await start({ ...parentWith({ definition: { name: "declines", onFailure: "fail", defaults: FAST, steps: [httpStep("charge")] } }), onFailure: "fail" });

    const parent = await waitForStatus(id, "failed");
    expect(stepOf(parent, "ship")).toMatchObject({ status: "failed", error: { retryable: false }, child: { id: `${id}:ship`, status: "failed" } });
    expect(stepOf(parent, "ship").error.message).toContain(`child workflow "${id}:ship" ended failed`);
    expect((await getWorkflow(`${id}:ship`)).status).toBe("failed");
  });

  it("fails the step with a clear error when the definitionRef names no published definition", async () => {
    const { id } = await start({ ...parentWith({ definitionRef: { name: "never-published" } }), onFailure: "fail" });

    const parent = await waitForStatus(id, "failed");
    expect(stepOf(parent, "ship").error.message).toMatch(/could not start: No definition "never-published"/);
    expect((await api("GET", `/v1/workflows/${id}:ship`)).status).toBe(404);
  });

  it("starts a fresh child <id>:<attempt> when the step's own retry says so", async () => {
    const { id } = await start(parentWith({ definition: waitingChild }, { retry: { maxAttempts: 2, initialIntervalMs: 1 } }));
    await waitForStatus(`${id}:ship`, "running");
    expect((await control(`${id}:ship`, "terminate", { reason: "by hand" })).status).toBe(202);

    await vi.waitFor(async () => expect((await getWorkflow(`${id}:ship:2`)).parent).toEqual({ id, stepId: "ship" }), { timeout: 5_000 });
    await sendEvent(`${id}:ship:2`, { event: "go", payload: { second: true } });
    const parent = await waitForStatus(id, "completed");
    expect(stepOf(parent, "ship")).toMatchObject({ status: "succeeded", attempt: 2, output: { go: { second: true } }, child: { id: `${id}:ship:2` } });
  });
});

describe("the parent's close reaches its open children", () => {
  it("cancels every open child when the parent is cancelled (onParentClose: cancel, the default)", async () => {
    const { id } = await start({
      name: "two-children",
      steps: [
        { id: "a", workflow: { definition: waitingChild } },
        { id: "b", dependsOn: [], workflow: { definition: waitingChild, onParentClose: "terminate" } },
        { id: "c", dependsOn: [], workflow: { definition: waitingChild, onParentClose: "abandon" } },
      ],
    });
    for (const step of ["a", "b", "c"]) await waitForStatus(`${id}:${step}`, "running");

    expect((await api("POST", `/v1/workflows/${id}/cancel`)).status).toBe(202);
    await waitForStatus(id, "cancelled");
    await waitForStatus(`${id}:a`, "cancelled");
    await waitForStatus(`${id}:b`, "terminated");
    expect((await getWorkflow(`${id}:c`)).status).toBe("running");
    expect((await historyOf(id)).filter((event) => event.type === "child_workflow_closed").map((event) => event.data.action).sort()).toEqual(["abandon", "cancel", "terminate"]);
  });

  it("terminates an open child when the parent is terminated", async () => {
    const { id } = await start(parentWith({ definition: waitingChild }));
    await waitForStatus(`${id}:ship`, "running");
    expect((await control(id, "terminate", { reason: "stop" })).status).toBe(202);
    const child = await waitForStatus(`${id}:ship`, "terminated");
    const terminated = (await historyOf(child.id)).find((event) => event.type === "workflow_terminated");
    // The parent acted, not a token: the child's history names it.
    expect(terminated?.data).toEqual({ actor: `workflow:${id}`, reason: `its parent workflow "${id}" closed step "ship"` });
  });
});
