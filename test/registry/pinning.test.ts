// A workflow runs the version it started with: the plan is stored in its own object at the start, so a version
// published while it waits (and a restart of its object) changes nothing about what it runs.
import { afterEach, describe, expect, it, vi } from "vitest";
import { getWorkflow, waitForStatus } from "../helpers/api";
import { publishNew, read, startByRef } from "../helpers/registry";
import { httpStep, json, mockRemote } from "../helpers/remote";
import { elapse } from "../helpers/time";
import { DAY, HOUR, restartObject, sendEvent, sleepStep, stepOf, waitStep } from "../helpers/workflow-language";

afterEach(() => vi.restoreAllMocks());

const stepIds = (workflow: { steps: { id: string }[] }) => workflow.steps.map((step) => step.id);

describe("a workflow started on version 1", () => {
  it("waits for its event through the publishing of version 2, then finishes as version 1", async () => {
    const remote = mockRemote(() => json({ shipped: true }));
    const name = "approve-then-ship";
    const v1 = await publishNew({ name, steps: [waitStep("approval", { event: "approved", timeoutMs: DAY }), httpStep("ship-v1")] }, 1);
    const { id, response } = await startByRef({ name });
    expect(response.status, JSON.stringify(response.body)).toBe(201);
    expect(stepOf(await getWorkflow(id), "approval").status).toBe("waiting");

    // Mid-run: a new version with other steps, and a restart that leaves the object only its storage.
    const v2 = await publishNew({ name, steps: [waitStep("approval", { event: "approved", timeoutMs: DAY }), httpStep("ship-v2"), httpStep("notify-v2")] }, 2);
    await restartObject(id);
    expect((await read(`/v1/definitions/${name}`)).body.version).toBe(2);
    expect((await sendEvent(id, { event: "approved", payload: { by: "ada" } })).status).toBe(202);
    const workflow = await waitForStatus(id, "completed");

    expect(workflow.definition).toEqual({ name, version: 1, hash: v1.hash });
    expect(workflow.definition.hash).not.toBe(v2.hash);
    expect(stepIds(workflow)).toEqual(["approval", "ship-v1"]);
    expect(workflow.output).toEqual({ approval: { by: "ada" }, "ship-v1": { shipped: true } });
    expect(remote.callsTo("/ship-v1")).toHaveLength(1);
    expect(remote.callsTo("/ship-v2")).toHaveLength(0);
    expect(remote.callsTo("/notify-v2")).toHaveLength(0);
  });

  it("sleeps through the publishing of version 2, then finishes as version 1, while a new start runs version 2", async () => {
    const remote = mockRemote(() => json({ ok: true }));
    const name = "nap-then-ship";
    const v1 = await publishNew({ name, steps: [sleepStep("nap", { durationMs: HOUR }), httpStep("ship-v1")] }, 1);
    const pinned = await startByRef({ name });
    expect(stepOf(pinned.response.body, "nap").status).toBe("sleeping");

    const v2 = await publishNew({ name, steps: [httpStep("ship-v2")] }, 2);
    const fresh = await startByRef({ name });
    await elapse(pinned.id, HOUR);
    const finished = await waitForStatus(pinned.id, "completed");

    expect(finished.definition).toEqual({ name, version: 1, hash: v1.hash });
    expect(stepIds(finished)).toEqual(["nap", "ship-v1"]);
    expect(remote.callsTo("/ship-v1").map((call) => call.headers["shepherd-workflow-id"])).toEqual([pinned.id]);
    const latest = await waitForStatus(fresh.id, "completed");
    expect(latest.definition).toEqual({ name, version: 2, hash: v2.hash });
    expect(stepIds(latest)).toEqual(["ship-v2"]);
  });
});
