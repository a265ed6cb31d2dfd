import { evictDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { clearInjectedFaults, injectFault, timesFired } from "../../src/dev/faults";
import { SEND_LEASE_MS } from "../../src/workflow/delivery-policy";
import { api, getWorkflow, historyOf, uniqueId, waitForStatus } from "../helpers/api";
import { objectRecord, schedulerStub } from "../helpers/scheduler";
import { backdate, fireAlarm } from "../helpers/time";
import { DAY, sendEvent, stepOf, waitStep } from "../helpers/workflow-language";

afterEach(() => {
  clearInjectedFaults();
  vi.restoreAllMocks();
});

/** A child that waits for "go", so the test decides when it ends. */
const child = { name: "waits-for-go", steps: [waitStep("go", { event: "go", timeoutMs: DAY })] };

const typesOf = async (id: string) => (await historyOf(id)).map((event) => event.type);

describe("case 28: parent and child out of step", () => {
  it("starts one child when the parent crashes between starting it and recording it, and ends the step once though the end notice comes twice", async () => {
    const id = uniqueId("parent");
    const childId = `${id}:ship`;
    injectFault("abortAfterChildStart", { probability: 1, times: 1 });

    // The parent's start commits the step's start with its outbox row, starts the child, and dies before recording it;
    // the front door's client retries the start on a fresh object, which answers the workflow it already has.
    const started = await api("POST", "/v1/workflows", { id, definition: { name: "parent", steps: [{ id: "ship", workflow: { definition: child } }] } });
    expect([200, 201]).toContain(started.status);
    expect(timesFired("abortAfterChildStart")).toBe(1);
    expect(stepOf(await getWorkflow(id), "ship")).toMatchObject({ status: "waiting", child: { id: childId, status: "starting" } });
    expect(await getWorkflow(childId)).toMatchObject({ status: "running", parent: { id, stepId: "ship" } });
    const record = await objectRecord(id);
    expect(record.outbox?.map((row) => row.kind)).toEqual(["child-start"]);

    // The child ends while the parent's object is evicted: its notice wakes the parent, whose step ends with its output.
    await evictDurableObject(schedulerStub(id));
    expect((await sendEvent(childId, { event: "go", payload: { tracking: "trk-28" } })).status).toBe(202);
    const parent = await waitForStatus(id, "completed");
    expect(stepOf(parent, "ship")).toMatchObject({ status: "succeeded", output: { go: { tracking: "trk-28" } }, child: { id: childId, status: "completed" } });

    // The same notice delivered again changes nothing.
    const notice = { parentId: id, stepId: "ship", attempt: 1, childId, status: "completed" as const, output: { go: { tracking: "trk-28" } } };
    expect(await schedulerStub(id).childEnded(notice)).toEqual({ ok: true, applied: false });
    expect(await schedulerStub(id).childEnded({ ...notice, status: "failed", error: { message: "late" } })).toEqual({ ok: true, applied: false });

    // The start's row, left by the crash, is delivered by the alarm a lease on: it finds the child this step
    // started, starts no second one and lets the row go.
    await backdate(id, { ms: SEND_LEASE_MS });
    await fireAlarm(id);
    expect((await objectRecord(id)).outbox).toEqual([]);
    expect((await typesOf(childId)).filter((type) => type === "workflow_started")).toHaveLength(1);
    const shipEvents = (await historyOf(id)).filter((event) => event.stepId === "ship").map((event) => event.type);
    expect(shipEvents).toEqual(["step_waiting_for_child", "child_workflow_ended", "step_succeeded"]);
    await vi.waitFor(async () => expect((await api("GET", `/v1/workflows?parentId=${id}`)).body.workflows.map((listed: { id: string }) => listed.id)).toEqual([childId]));
  });

  it("reaches every open child with the parent's cancel, a child whose start was not recorded yet included", async () => {
    const id = uniqueId("parent");
    injectFault("abortAfterChildStart", { probability: 1, times: 1 });
    const steps = ["a", "b"].map((step) => ({ id: step, dependsOn: [], workflow: { definition: child } }));
    await api("POST", "/v1/workflows", { id, definition: { name: "parent", steps } });
    await vi.waitFor(async () => {
      for (const step of ["a", "b"]) expect((await api("GET", `/v1/workflows/${id}:${step}`)).status).toBe(200);
    });

    expect((await api("POST", `/v1/workflows/${id}/cancel`)).status).toBe(202);
    await waitForStatus(id, "cancelled");
    // A close whose child's start is still in the outbox waits for that start; the alarm delivers both.
    await backdate(id, { ms: SEND_LEASE_MS });
    await fireAlarm(id);
    for (const step of ["a", "b"]) await waitForStatus(`${id}:${step}`, "cancelled");
    expect((await objectRecord(id)).outbox).toEqual([]);
  });
});
