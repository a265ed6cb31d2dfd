import { afterEach, describe, expect, it, vi } from "vitest";
import { api, historyOf, start, uniqueId, waitForStatus, waitForStep } from "../helpers/api";
import { json, mockRemote, REMOTE } from "../helpers/remote";
import { holdBackSends } from "../helpers/queue";
import { schedulerStub } from "../helpers/scheduler";
import { FAST } from "../helpers/policies";

afterEach(() => vi.restoreAllMocks());

describe("remote services that report through their task token", () => {
  it("waits on a 202, takes heartbeats with progress, then completes with the reported output", async () => {
    const remote = mockRemote(() => json({ accepted: true }, 202));
    const { id } = await start({ name: "async", defaults: FAST, steps: [{ id: "render", action: { type: "http", url: `${REMOTE}/render` } }] });
    await waitForStep(id, "render", "waiting");
    const token = remote.calls[0]!.headers["shepherd-task-token"];

    const heartbeat = await api("POST", `/v1/tasks/${token}/heartbeat`, { progress: { percent: 40 } });
    expect(heartbeat).toEqual({ status: 200, body: { cancelRequested: false } });
    const waiting = await api("GET", `/v1/workflows/${id}`);
    expect(waiting.body.steps[0].progress).toEqual({ percent: 40 });

    const complete = await api("POST", `/v1/tasks/${token}/complete`, { output: { url: "https://cdn.example/x.png" } });
    expect(complete.status).toBe(200);
    const workflow = await waitForStatus(id, "completed");
    expect(workflow.output).toEqual({ render: { url: "https://cdn.example/x.png" } });
    // A second completion of an ended step is gone, not applied twice.
    expect((await api("POST", `/v1/tasks/${token}/complete`, { output: {} })).status).toBe(410);
  });

  it("retries a waiting step whose remote reports a retryable failure", async () => {
    const remote = mockRemote((_call, n) => (n === 1 ? json({}, 202) : json({ done: true })));
    const { id } = await start({ name: "async-fail", defaults: FAST, steps: [{ id: "render", action: { type: "http", url: `${REMOTE}/render` } }] });
    await waitForStep(id, "render", "waiting");
    const token = remote.calls[0]!.headers["shepherd-task-token"];
    const failed = await api("POST", `/v1/tasks/${token}/fail`, { error: { message: "GPU lost", retryable: true } });
    expect(failed.status).toBe(200);
    const workflow = await waitForStatus(id, "completed");
    expect(workflow.steps[0].attempts[0].error.message).toBe("GPU lost");
    expect(workflow.steps[0].attempt).toBe(2);
  });

  it("case 3 (zombie completion): refuses a report from an attempt that is no longer current with 409 and records it", async () => {
    const remote = mockRemote((_call, n) => (n === 1 ? json({}, 503) : json({}, 202)));
    const { id } = await start({ name: "stale", defaults: FAST, steps: [{ id: "render", action: { type: "http", url: `${REMOTE}/render` } }] });
    await waitForStep(id, "render", "waiting");
    const [first, second] = remote.calls.map((call) => call.headers["shepherd-task-token"]);
    expect(first).not.toBe(second);

    const stale = await api("POST", `/v1/tasks/${first}/complete`, { output: { zombie: true } });
    expect(stale.status).toBe(409);
    expect(stale.body.error.code).toBe("stale_attempt");
    const workflow = await api("GET", `/v1/workflows/${id}`);
    expect(workflow.body.steps[0].status).toBe("waiting");
    const rejected = (await historyOf(id)).filter((event) => event.type === "stale_report_rejected");
    expect(rejected).toHaveLength(1);
    expect(rejected[0]).toMatchObject({ stepId: "render", attempt: 1 });

    expect((await api("POST", `/v1/tasks/${second}/complete`, {})).status).toBe(200);
    await waitForStatus(id, "completed");
  });

  it("case 21 (token forgery): refuses forged and altered task tokens with 401", async () => {
    const id = uniqueId();
    const held = holdBackSends(id);
    await start({ name: "tokens", defaults: FAST, steps: [{ id: "a", action: { type: "http", url: `${REMOTE}/a` } }] }, { id });
    const token = held[0]!.token;
    const [payload, signature] = token.split(".");
    const forged = `${btoa(JSON.stringify(["default", id, "a", 2])).replace(/=+$/, "")}.${signature}`;
    for (const bad of [`${payload}.${signature}x`, forged, "not-a-token", `${payload}`]) {
      const response = await api("POST", `/v1/tasks/${bad}/heartbeat`, {});
      expect(response.status, bad).toBe(401);
      expect(response.body.error.code).toBe("unauthorized");
    }
    await schedulerStub(id).command({ command: "cancel", by: { actor: "operator" } });
  });
});
