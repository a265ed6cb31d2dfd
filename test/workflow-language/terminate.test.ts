import { afterEach, describe, expect, it, vi } from "vitest";
import { api, getWorkflow, historyOf, snapshot, start, waitForStatus, waitForStep } from "../helpers/api";
import { PATIENT } from "../helpers/policies";
import { watchSends } from "../helpers/queue";
import { httpStep, json, mockRemote, REMOTE } from "../helpers/remote";
import { callTask } from "../helpers/tasks";
import { backdate } from "../helpers/time";
import { control, DAY, HOUR, sendEvent, sleepStep, stepOf, waitStep, wakeSupervisor } from "../helpers/workflow-language";

afterEach(() => vi.restoreAllMocks());

describe("terminate", () => {
  it("ends the workflow terminated at once, fences its running attempt (a late report gets 410) and compensates nothing", async () => {
    const remote = mockRemote((call) => (new URL(call.url).pathname === "/ship" ? json({ accepted: true }, 202) : json({ ref: "c-1" })));
    const queue = watchSends();
    const { id } = await start({
      name: "terminated",
      defaults: PATIENT,
      steps: [httpStep("charge", { compensate: { type: "http", url: `${REMOTE}/refund` } }), httpStep("ship")],
    });
    await waitForStep(id, "ship", "waiting");
    const token = remote.callsTo("/ship")[0]!.headers["shepherd-task-token"]!;

    const terminated = await control(id, "terminate", { reason: "the customer called" });

    expect(terminated.status).toBe(202);
    expect(terminated.body).toMatchObject({ id, status: "terminated", error: { message: "the customer called" }, endedAt: expect.any(Number) });
    // What succeeded stays succeeded: nothing is undone.
    expect(stepOf(terminated.body, "charge")).toMatchObject({ status: "succeeded", output: { ref: "c-1" } });
    expect(stepOf(terminated.body, "ship").attempts.map((attempt) => attempt.status)).toEqual(["cancelled"]);

    const late = await callTask(token, "complete", { output: { shipped: true } });
    expect(late.status).toBe(410);
    expect(late.body.error.code).toBe("gone");

    const workflow = await getWorkflow(id);
    expect(workflow.status).toBe("terminated");
    expect(stepOf(workflow, "charge").status).toBe("succeeded");
    expect(stepOf(workflow, "ship").output).toBeUndefined();
    expect(remote.callsTo("/refund")).toHaveLength(0);
    expect(queue.of(id).filter((sent) => sent.message.kind === "compensation")).toEqual([]);
    const history = await historyOf(id);
    expect(history.some((event) => event.type === "compensation_started" || event.type === "step_compensated")).toBe(false);
    expect(history.find((event) => event.type === "workflow_terminated")).toMatchObject({ data: { reason: "the customer called" } });
  });

  it("stops a compensation under way: its running attempt is fenced and nothing more is compensated", async () => {
    const remote = mockRemote((call) => {
      const path = new URL(call.url).pathname;
      if (path === "/ship") return json({ error: "address rejected" }, 400);
      if (path === "/refund") return json({ accepted: true }, 202);
      return json({ ok: true });
    });
    const { id } = await start({
      name: "terminated-compensating",
      defaults: PATIENT,
      steps: [
        httpStep("reserve", { compensate: { type: "http", url: `${REMOTE}/release` } }),
        httpStep("charge", { compensate: { type: "http", url: `${REMOTE}/refund` } }),
        httpStep("ship"),
      ],
    });
    await vi.waitFor(() => expect(remote.callsTo("/refund")).toHaveLength(1), { timeout: 10_000, interval: 20 });
    await waitForStatus(id, "compensating");
    const token = remote.callsTo("/refund")[0]!.headers["shepherd-task-token"]!;

    const terminated = await control(id, "terminate");

    expect(terminated.status).toBe(202);
    expect(terminated.body.status).toBe("terminated");
    expect((await callTask(token, "complete", {})).status).toBe(410);
    const workflow = await getWorkflow(id);
    expect(workflow.status).toBe("terminated");
    expect(stepOf(workflow, "reserve").status).toBe("succeeded");
    expect(remote.callsTo("/release")).toHaveLength(0);
  });

  it('says "terminated by an operator" when no reason is given', async () => {
    const { id } = await start({ name: "terminated-no-reason", steps: [waitStep("approval", { event: "approved", timeoutMs: DAY })] });

    const terminated = await control(id, "terminate", {});

    expect(terminated.status).toBe(202);
    expect(terminated.body.error).toEqual({ message: "terminated by an operator" });
    expect((await historyOf(id)).at(-1)).toMatchObject({ type: "workflow_terminated", data: {} });
  });

  it("takes no body at all", async () => {
    const { id } = await start({ name: "terminated-no-body", steps: [waitStep("approval", { event: "approved", timeoutMs: DAY })] });
    const terminated = await api("POST", `/v1/workflows/${id}/terminate`);
    expect(terminated.status).toBe(202);
    expect(terminated.body.status).toBe("terminated");
  });

  it("stops a sleep and a wait for good: their timers falling due later change nothing", async () => {
    const { id } = await start({
      name: "terminated-timers",
      steps: [sleepStep("nap", { durationMs: HOUR }, { dependsOn: [] }), waitStep("approval", { event: "approved", timeoutMs: HOUR }, { dependsOn: [] })],
    });
    expect((await control(id, "terminate")).status).toBe(202);
    const before = await snapshot("default", id);

    await backdate(id, { ms: 2 * HOUR });
    await wakeSupervisor(id);

    const after = await snapshot("default", id);
    expect(after.status).toBe("terminated");
    expect(after.historyLength).toBe(before.historyLength);
    expect(after.workflow.steps.map((step: { status: string }) => step.status)).toEqual(before.workflow.steps.map((step: { status: string }) => step.status));
  });

  it("terminates a paused workflow", async () => {
    const { id } = await start({ name: "terminated-paused", steps: [waitStep("approval", { event: "approved", timeoutMs: DAY })] });
    expect((await control(id, "pause")).status).toBe(202);

    const terminated = await control(id, "terminate");

    expect(terminated.status).toBe(202);
    expect(terminated.body.status).toBe("terminated");
    expect(terminated.body.pausedAt).toBeUndefined();
  });

  it.each<[string, (id: string) => Promise<unknown>]>([
    ["terminated", (id) => control(id, "terminate")],
    ["completed", (id) => sendEvent(id, { event: "approved" })],
    ["cancelled", (id) => api("POST", `/v1/workflows/${id}/cancel`)],
  ])("refuses with 409 to terminate a workflow that ended %s, changing nothing", async (status, end) => {
    const { id } = await start({ name: "terminate-ended", steps: [waitStep("approval", { event: "approved", timeoutMs: DAY })] });
    await end(id);
    await waitForStatus(id, status);
    const before = await snapshot("default", id);

    const refused = await control(id, "terminate", { reason: "again" });

    expect(refused.status).toBe(409);
    expect(refused.body.error.code).toBe("conflict");
    expect(await snapshot("default", id)).toEqual(before);
  });

  it("is listed under status=terminated", async () => {
    const { id } = await start({ name: "terminate-listed", steps: [waitStep("approval", { event: "approved", timeoutMs: DAY })] });
    await control(id, "terminate");
    await vi.waitFor(
      async () => {
        const page = await api("GET", "/v1/workflows?status=terminated&name=terminate-listed&limit=100");
        expect(page.body.workflows.map((w: { id: string }) => w.id)).toContain(id);
      },
      { timeout: 10_000, interval: 50 },
    );
  });
});
