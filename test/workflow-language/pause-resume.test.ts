import { afterEach, describe, expect, it, vi } from "vitest";
import { api, getWorkflow, historyOf, snapshot, start, uniqueId, waitForStatus, waitForStep } from "../helpers/api";
import { FAST, PATIENT } from "../helpers/policies";
import { watchSends } from "../helpers/queue";
import { httpStep, json, mockRemote, REMOTE } from "../helpers/remote";
import { schedulerStub } from "../helpers/scheduler";
import { callTask } from "../helpers/tasks";
import { backdate, elapse } from "../helpers/time";
import { control, DAY, HOUR, sendEvent, sleepStep, stepOf, waitStep, wakeSupervisor } from "../helpers/workflow-language";

afterEach(() => vi.restoreAllMocks());

/**
 * Lets `ms` pass for a paused workflow and runs its supervisor: the alarm it holds, or one set for the purpose
 * when it holds none (a paused workflow need not keep an alarm for the timers it holds).
 */
async function passWhilePaused(id: string, ms: number) {
  await backdate(id, { ms });
  await wakeSupervisor(id);
}

async function pause(id: string) {
  const paused = await control(id, "pause");
  expect(paused.status, JSON.stringify(paused.body)).toBe(202);
  return paused.body;
}

/** The task token the remote received for a step's first attempt. */
function tokenFor(remote: ReturnType<typeof mockRemote>, path: string): string {
  const token = remote.callsTo(path)[0]?.headers["shepherd-task-token"];
  if (!token) throw new Error(`no request reached ${path}`);
  return token;
}

describe("a paused workflow", () => {
  it("holds a sleep that falls due and a step that becomes ready, and resume releases both at once", async () => {
    const remote = mockRemote((call) => (new URL(call.url).pathname === "/work" ? json({ accepted: true }, 202) : json({ ok: true })));
    const queue = watchSends();
    const { id } = await start({
      name: "pause-holds",
      defaults: PATIENT,
      steps: [
        sleepStep("nap", { durationMs: HOUR }, { dependsOn: [] }),
        httpStep("after-nap", { dependsOn: ["nap"] }),
        httpStep("work", { dependsOn: [] }),
        httpStep("after-work", { dependsOn: ["work"] }),
      ],
    });
    await waitForStep(id, "work", "waiting");

    const paused = await pause(id);
    expect(paused).toMatchObject({ id, status: "paused", pausedAt: expect.any(Number) });

    // The running attempt goes on and its report is recorded; the step it makes ready is not dispatched.
    expect((await callTask(tokenFor(remote, "/work"), "complete", { output: { done: true } })).status).toBe(200);
    let workflow = await getWorkflow(id);
    expect(workflow.status).toBe("paused");
    expect(stepOf(workflow, "work")).toMatchObject({ status: "succeeded", output: { done: true } });
    expect(stepOf(workflow, "after-work").status).toBe("pending");

    // The sleep falls due and the alarm fires: it does not wake.
    await passWhilePaused(id, HOUR);
    workflow = await getWorkflow(id);
    expect(workflow.status).toBe("paused");
    expect(stepOf(workflow, "nap").status).toBe("sleeping");
    expect(stepOf(workflow, "after-nap").status).toBe("pending");
    expect(stepOf(workflow, "after-work").status).toBe("pending");
    expect(queue.of(id).map((sent) => sent.message.stepId)).toEqual(["work"]);
    expect(remote.calls.map((call) => new URL(call.url).pathname)).toEqual(["/work"]);

    const resumed = await control(id, "resume");

    expect(resumed.status).toBe(202);
    expect(resumed.body.status).toBe("running");
    expect(resumed.body.pausedAt).toBeUndefined();
    // Both at once, in the answer to the resume.
    expect(stepOf(resumed.body, "nap").status).toBe("succeeded");
    expect(stepOf(resumed.body, "after-nap").status).not.toBe("pending");
    expect(stepOf(resumed.body, "after-work").status).not.toBe("pending");
    await waitForStatus(id, "completed");
    expect(queue.of(id).map((sent) => sent.message.stepId).slice(1).sort()).toEqual(["after-nap", "after-work"]);
    const types = (await historyOf(id)).map((event) => event.type);
    expect(types.indexOf("workflow_paused")).toBeGreaterThan(-1);
    expect(types.indexOf("workflow_resumed")).toBeGreaterThan(types.indexOf("workflow_paused"));
  });

  it("keeps an event for a waiting step in the inbox (consumed: false) and hands it over on resume", async () => {
    const { id } = await start({ name: "pause-wait", steps: [waitStep("approval", { event: "approved", timeoutMs: DAY })] });
    await pause(id);

    const sent = await sendEvent(id, { event: "approved", payload: { by: "ada" } });

    expect(sent).toEqual({ status: 202, body: { consumed: false } });
    const paused = await getWorkflow(id);
    expect(stepOf(paused, "approval").status).toBe("waiting");
    expect(paused.pendingEvents).toHaveLength(1);

    expect((await control(id, "resume")).status).toBe(202);
    const workflow = await waitForStatus(id, "completed");
    expect(stepOf(workflow, "approval").output).toEqual({ by: "ada" });
    expect(workflow.pendingEvents).toEqual([]);
  });

  it("lets no wait time out while paused, and applies the timeout that fell due on resume", async () => {
    const { id } = await start({ name: "pause-wait-timeout", steps: [waitStep("approval", { event: "approved", timeoutMs: HOUR, onTimeout: "skip" })] });
    await pause(id);

    await passWhilePaused(id, 2 * HOUR);
    expect(stepOf(await getWorkflow(id), "approval").status).toBe("waiting");
    expect((await historyOf(id)).some((event) => event.type === "wait_timed_out")).toBe(false);

    expect((await control(id, "resume")).status).toBe(202);
    const workflow = await waitForStatus(id, "completed");
    expect(stepOf(workflow, "approval").status).toBe("skipped");
  });

  it("hands an event sent while paused to its wait on resume, before the wait's timeout that fell due is looked at", async () => {
    const { id } = await start({ name: "pause-event-first", onFailure: "fail", steps: [waitStep("approval", { event: "approved", timeoutMs: HOUR })] });
    await pause(id);
    expect((await sendEvent(id, { event: "approved", payload: { in: "time" } })).body).toEqual({ consumed: false });
    await passWhilePaused(id, 2 * HOUR);

    expect((await control(id, "resume")).status).toBe(202);
    const workflow = await waitForStatus(id, "completed");
    expect(stepOf(workflow, "approval").output).toEqual({ in: "time" });
  });

  it("still supervises a running attempt: a missed heartbeat is acted on, the retry is held until resume", async () => {
    const remote = mockRemote(() => json({ charged: true }));
    const id = uniqueId();
    // The agent that takes attempt 1 dies after claiming it; later attempts reach a live agent.
    const queue = watchSends((message) => message.workflowId === id && message.attempt === 1);
    await start({ name: "pause-supervised", defaults: PATIENT, steps: [httpStep("charge")] }, { id });
    expect((await schedulerStub(id).claim("charge", 1)).ok).toBe(true);
    await pause(id);

    await elapse(id, PATIENT.timeouts.heartbeatMs);
    let workflow = await getWorkflow(id);
    expect(workflow.status).toBe("paused");
    expect(stepOf(workflow, "charge").attempts.map((attempt) => attempt.status)).toEqual(["timed_out"]);
    expect((await historyOf(id)).find((event) => event.type === "step_heartbeat_missed")).toMatchObject({ stepId: "charge", attempt: 1 });

    // Its backoff passes while paused: the retry is held.
    await passWhilePaused(id, PATIENT.retry.initialIntervalMs);
    workflow = await getWorkflow(id);
    expect(stepOf(workflow, "charge").attempts).toHaveLength(1);
    expect(queue.of(id).map((sent) => sent.message.attempt)).toEqual([1]);

    expect((await control(id, "resume")).status).toBe(202);
    workflow = await waitForStatus(id, "completed");
    expect(stepOf(workflow, "charge").attempts.map((attempt) => attempt.status)).toEqual(["timed_out", "succeeded"]);
    expect(remote.requestsFor(`${id}:charge`)).toBe(1);
  });

  it("records a step that fails for good while paused, and applies onFailure only on resume", async () => {
    const remote = mockRemote(() => json({ accepted: true }, 202));
    const { id } = await start({ name: "pause-failure", onFailure: "fail", defaults: PATIENT, steps: [httpStep("render")] });
    await waitForStep(id, "render", "waiting");
    await pause(id);

    expect((await callTask(tokenFor(remote, "/render"), "fail", { error: { message: "GPU lost", retryable: false } })).status).toBe(200);
    const paused = await getWorkflow(id);
    expect(paused.status).toBe("paused");
    expect(stepOf(paused, "render").status).toBe("failed");

    expect((await control(id, "resume")).status).toBe(202);
    const workflow = await waitForStatus(id, "failed");
    expect(workflow.error.message).toContain("render");
  });

  it("still ends at the workflow's timeout", async () => {
    const { id } = await start({ name: "pause-timeout", onFailure: "fail", timeoutMs: HOUR, steps: [waitStep("approval", { event: "approved", timeoutMs: DAY })] });
    await pause(id);

    await elapse(id, HOUR);

    const workflow = await waitForStatus(id, "failed");
    expect(workflow.error.timeout).toBe("workflow_timeout");
    expect(workflow.pausedAt).toBeUndefined();
  });

  it("is listed under status=paused", async () => {
    const { id } = await start({ name: "pause-listed", steps: [waitStep("approval", { event: "approved", timeoutMs: DAY })] });
    await pause(id);
    await vi.waitFor(
      async () => {
        const page = await api("GET", "/v1/workflows?status=paused&name=pause-listed&limit=100");
        expect(page.body.workflows.map((w: { id: string }) => w.id)).toContain(id);
      },
      { timeout: 10_000, interval: 50 },
    );
  });
});

describe("pause and resume refused or repeated", () => {
  it("answers pause of a paused workflow with 200 and the workflow, changing nothing", async () => {
    const { id } = await start({ name: "pause-twice", steps: [waitStep("approval", { event: "approved", timeoutMs: DAY })] });
    await pause(id);
    const before = await snapshot("default", id);

    const again = await control(id, "pause");

    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ id, status: "paused" });
    expect(await snapshot("default", id)).toEqual(before);
  });

  it.each<[string, (id: string) => Promise<unknown>]>([
    ["completed", (id) => sendEvent(id, { event: "approved" })],
    ["terminated", (id) => control(id, "terminate")],
    ["cancelled", (id) => api("POST", `/v1/workflows/${id}/cancel`)],
  ])("refuses with 409 to pause or resume a workflow that ended %s, changing nothing", async (status, end) => {
    const { id } = await start({ name: "pause-ended", steps: [waitStep("approval", { event: "approved", timeoutMs: DAY })] });
    await end(id);
    await waitForStatus(id, status);
    const before = await snapshot("default", id);

    for (const action of ["pause", "resume"] as const) {
      const refused = await control(id, action);
      expect(refused.status, action).toBe(409);
      expect(refused.body.error.code).toBe("conflict");
    }
    expect(await snapshot("default", id)).toEqual(before);
  });

  it("refuses with 409 to resume a running workflow, changing nothing", async () => {
    const { id } = await start({ name: "resume-running", steps: [waitStep("approval", { event: "approved", timeoutMs: DAY })] });
    const before = await snapshot("default", id);

    const refused = await control(id, "resume");

    expect(refused.status).toBe(409);
    expect(refused.body.error.code).toBe("conflict");
    expect(await snapshot("default", id)).toEqual(before);
  });

  it("refuses with 409 to pause a workflow that is compensating, changing nothing", async () => {
    const remote = mockRemote((call) => {
      const path = new URL(call.url).pathname;
      if (path === "/ship") return json({ error: "address rejected" }, 400);
      if (path === "/refund") return json({ accepted: true }, 202);
      return json({ ok: true });
    });
    const { id } = await start({
      name: "pause-compensating",
      defaults: PATIENT,
      steps: [httpStep("charge", { compensate: { type: "http", url: `${REMOTE}/refund` } }), httpStep("ship")],
    });
    await vi.waitFor(() => expect(remote.callsTo("/refund")).toHaveLength(1), { timeout: 10_000, interval: 20 });
    await waitForStatus(id, "compensating");
    const before = await snapshot("default", id);

    const refused = await control(id, "pause");

    expect(refused.status).toBe(409);
    expect(refused.body.error.code).toBe("conflict");
    expect(await snapshot("default", id)).toEqual(before);
    await control(id, "terminate");
  });

  it("refuses with 409 to pause a workflow that needs attention, changing nothing", async () => {
    mockRemote(() => json({ error: "declined" }, 422));
    const { id } = await start({ name: "pause-attention", onFailure: "escalate", defaults: FAST, steps: [{ id: "charge", action: { type: "http", url: `${REMOTE}/charge` } }] });
    await waitForStatus(id, "needs_attention");
    const before = await snapshot("default", id);

    const refused = await control(id, "pause");

    expect(refused.status).toBe(409);
    expect(await snapshot("default", id)).toEqual(before);
  });
});
