import { afterEach, describe, expect, it, vi } from "vitest";
import { api, getWorkflow, historyOf, snapshot, start, waitForStatus, waitForStep } from "../helpers/api";
import { FAST } from "../helpers/policies";
import { httpStep, json, mockRemote, REMOTE } from "../helpers/remote";
import { alarmOf } from "../helpers/scheduler";
import { callTask } from "../helpers/tasks";
import { elapse, fireAlarm } from "../helpers/time";
import { control, DAY, HOUR, sendEvent, stepOf, waitStep } from "../helpers/workflow-language";

afterEach(() => vi.restoreAllMocks());

const pathOf = (url: string) => new URL(url).pathname;

/**
 * A remote that applies each Idempotency-Key's effect once, as an idempotent service does: `applied` lists
 * the keys whose effect happened, in order. `failing(path, n)` makes the n-th request to a path answer 503
 * after the effect was applied, as when the response is lost on its way back.
 */
function idempotentRemote(failing: (path: string, n: number) => boolean) {
  const applied: string[] = [];
  const requests = new Map<string, number>();
  const remote = mockRemote((call) => {
    const path = pathOf(call.url);
    const n = (requests.get(path) ?? 0) + 1;
    requests.set(path, n);
    const key = call.headers["idempotency-key"] ?? "";
    if (!applied.includes(key)) applied.push(key);
    return failing(path, n) ? json({ error: "response lost" }, 503) : json({ done: path });
  });
  return { remote, applied };
}

const keysSentTo = (remote: ReturnType<typeof mockRemote>, path: string) => remote.callsTo(path).map((call) => call.headers["idempotency-key"]);

describe("redrive", () => {
  it("re-runs a failed workflow's failed step with a fresh budget and the same Idempotency-Key, so its effect happens once, keeping what succeeded", async () => {
    // Charge's remote applies the charge but its answers are lost: three times before the redrive, twice after.
    let healthyFrom = Number.POSITIVE_INFINITY;
    const { remote, applied } = idempotentRemote((path, n) => path === "/charge" && n < healthyFrom);
    const { id } = await start({ name: "redrive-failed", onFailure: "fail", defaults: FAST, steps: [httpStep("reserve"), httpStep("charge"), httpStep("ship")] });
    const failed = await waitForStatus(id, "failed");
    expect(failed.redriveCount).toBe(0);
    expect(stepOf(failed, "charge")).toMatchObject({ status: "failed", attempt: 3 });

    // Only a fresh budget of three attempts gets through two more lost answers.
    healthyFrom = 6;
    const redriven = await control(id, "redrive");

    expect(redriven.status).toBe(202);
    expect(redriven.body).toMatchObject({ id, status: "running", redriveCount: 1 });
    expect(redriven.body.error).toBeUndefined();
    expect(redriven.body.endedAt).toBeUndefined();
    expect(stepOf(redriven.body, "reserve")).toEqual(stepOf(failed, "reserve"));
    const workflow = await waitForStatus(id, "completed");

    expect(workflow.redriveCount).toBe(1);
    expect(workflow.output.reserve).toEqual(stepOf(failed, "reserve").output);
    expect(remote.requestsFor(`${id}:reserve`)).toBe(1);
    const charge = stepOf(workflow, "charge");
    expect(charge.attempts.map((attempt) => attempt.n)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(charge.attempts.map((attempt) => attempt.status)).toEqual(["failed", "failed", "failed", "failed", "failed", "succeeded"]);
    expect(keysSentTo(remote, "/charge")).toEqual(Array(6).fill(`${id}:charge`));
    // One key, so one charge, however many requests carried it.
    expect(applied.filter((key) => key.startsWith(`${id}:charge`))).toEqual([`${id}:charge`]);

    const history = await historyOf(id);
    const redrive = history.find((event) => event.type === "workflow_redriven");
    expect(redrive?.data).toEqual({ steps: ["charge", "ship"], redriveCount: 1, actor: "default" });
    const types = history.map((event) => event.type);
    expect(types.indexOf("workflow_redriven")).toBeGreaterThan(types.indexOf("workflow_failed"));
    expect(types.at(-1)).toBe("workflow_completed");
  });

  it("with fromStep, re-runs that step and everything downstream of it; a succeeded step re-run gets a key of its own", async () => {
    const remote = mockRemote((call, n) => (pathOf(call.url) === "/c" && n === 1 ? json({ error: "bad input" }, 400) : json({ path: pathOf(call.url), key: call.headers["idempotency-key"] })));
    const { id } = await start({ name: "redrive-from", onFailure: "fail", defaults: FAST, steps: [httpStep("a"), httpStep("b"), httpStep("c")] });
    const failed = await waitForStatus(id, "failed");

    const redriven = await control(id, "redrive", { fromStep: "b" });

    expect(redriven.status).toBe(202);
    expect(stepOf(redriven.body, "a")).toEqual(stepOf(failed, "a"));
    const workflow = await waitForStatus(id, "completed");
    expect(remote.callsTo("/a")).toHaveLength(1);
    // b had succeeded: the operator asked for it again, so the remote must do it anew, under a new key.
    expect(keysSentTo(remote, "/b")).toEqual([`${id}:b`, `${id}:b:redrive-1`]);
    // c had failed: its effect never happened, its key stays.
    expect(keysSentTo(remote, "/c")).toEqual([`${id}:c`, `${id}:c`]);
    expect(workflow.output.b).toEqual({ path: "/b", key: `${id}:b:redrive-1` });
    // Attempt numbers run on, so the old attempts stay fenced.
    expect(stepOf(workflow, "b").attempts.map((attempt) => attempt.n)).toEqual([1, 2]);
    expect((await historyOf(id)).find((event) => event.type === "workflow_redriven")?.data).toEqual({ fromStep: "b", steps: ["b", "c"], redriveCount: 1, actor: "default" });
  });

  it("re-runs a cancelled workflow; a step whose effect compensation undid runs under a key of its own", async () => {
    const remote = mockRemote((call, n) => (pathOf(call.url) === "/ship" && n === 1 ? json({ accepted: true }, 202) : json({ ok: pathOf(call.url) })));
    const { id } = await start({
      name: "redrive-cancelled",
      defaults: FAST,
      steps: [httpStep("charge", { compensate: { type: "http", url: `${REMOTE}/refund` } }), httpStep("ship")],
    });
    await waitForStep(id, "ship", "waiting");
    const oldToken = remote.callsTo("/ship")[0]!.headers["shepherd-task-token"]!;
    expect((await api("POST", `/v1/workflows/${id}/cancel`)).status).toBe(202);
    const cancelled = await waitForStatus(id, "cancelled");
    expect(stepOf(cancelled, "charge").status).toBe("compensated");

    expect((await control(id, "redrive")).status).toBe(202);

    const workflow = await waitForStatus(id, "completed");
    expect(keysSentTo(remote, "/charge")).toEqual([`${id}:charge`, `${id}:charge:redrive-1`]);
    expect(keysSentTo(remote, "/ship")).toEqual([`${id}:ship`, `${id}:ship`]);
    expect(remote.callsTo("/refund")).toHaveLength(1);
    expect((await historyOf(id)).find((event) => event.type === "workflow_redriven")?.data).toEqual({ steps: ["charge", "ship"], redriveCount: 1, actor: "default" });
    expect(workflow.redriveCount).toBe(1);
    // Attempt numbers ran on: the attempt fenced by the cancel stays fenced after the redrive.
    expect(stepOf(workflow, "ship").attempts.map((attempt) => attempt.n)).toEqual([1, 2]);
    const late = await callTask(oldToken, "complete", { output: { zombie: true } });
    expect([409, 410]).toContain(late.status);
    expect(stepOf(await getWorkflow(id), "ship").output).toEqual({ ok: "/ship" });
  });

  it("re-runs a terminated workflow: its wait waits again, with a new timeout", async () => {
    const { id } = await start({ name: "redrive-terminated", steps: [waitStep("approval", { event: "approved", timeoutMs: DAY })] });
    expect((await control(id, "terminate")).status).toBe(202);
    const before = Date.now();

    const redriven = await control(id, "redrive");

    expect(redriven.status).toBe(202);
    const approval = stepOf(redriven.body, "approval");
    expect(approval.status).toBe("waiting");
    expect(approval.waitingFor?.timeoutAt).toBeGreaterThanOrEqual(before + DAY);
    expect((await sendEvent(id, { event: "approved", payload: { ok: true } })).body).toEqual({ consumed: true });
    const workflow = await waitForStatus(id, "completed");
    expect(workflow.output).toEqual({ approval: { ok: true } });
  });

  it("counts every redrive, and each re-run of a succeeded step gets that redrive's key", async () => {
    const remote = mockRemote(() => json({ ok: true }));
    const { id } = await start({ name: "redrive-twice", defaults: FAST, steps: [httpStep("a"), waitStep("approval", { event: "approved", timeoutMs: DAY })] });
    for (const round of [1, 2]) {
      await waitForStep(id, "approval", "waiting");
      expect((await control(id, "terminate")).status).toBe(202);
      const redriven = await control(id, "redrive", { fromStep: "a" });
      expect(redriven.body.redriveCount).toBe(round);
    }
    await waitForStep(id, "approval", "waiting");
    await sendEvent(id, { event: "approved" });
    const workflow = await waitForStatus(id, "completed");

    expect(workflow.redriveCount).toBe(2);
    expect(keysSentTo(remote, "/a")).toEqual([`${id}:a`, `${id}:a:redrive-1`, `${id}:a:redrive-2`]);
    const redrives = (await historyOf(id)).filter((event) => event.type === "workflow_redriven");
    expect(redrives.map((event) => event.data)).toEqual([
      { fromStep: "a", steps: ["a", "approval"], redriveCount: 1, actor: "default" },
      { fromStep: "a", steps: ["a", "approval"], redriveCount: 2, actor: "default" },
    ]);
  });

  it("restarts the workflow's timeout from the redrive", async () => {
    const { id } = await start({ name: "redrive-timeout", onFailure: "fail", timeoutMs: HOUR, steps: [waitStep("approval", { event: "approved", timeoutMs: DAY })] });
    await elapse(id, HOUR);
    await waitForStatus(id, "failed");
    const before = Date.now();

    expect((await control(id, "redrive")).status).toBe(202);

    // The alarm first covers the redrive's index write (a lease on); run, it finds nothing due and sets the timeout.
    expect(await fireAlarm(id)).toBe(true);
    expect(await alarmOf(id)).toBeGreaterThanOrEqual(before + HOUR);
    await elapse(id, HOUR);
    const workflow = await waitForStatus(id, "failed");
    expect(workflow.error.timeout).toBe("workflow_timeout");
    expect(workflow.redriveCount).toBe(1);
  });
});

describe("redrive refused", () => {
  async function expectRefused(id: string, body: Record<string, unknown>, status: number, code: string) {
    const before = await snapshot("default", id);
    const refused = await control(id, "redrive", body);
    expect(refused.status, JSON.stringify(refused.body)).toBe(status);
    expect(refused.body.error.code).toBe(code);
    expect(await snapshot("default", id)).toEqual(before);
  }

  it("with 409 for a completed workflow, changing nothing", async () => {
    const { id } = await start({ name: "redrive-completed", steps: [waitStep("approval", { event: "approved", timeoutMs: DAY })] });
    await sendEvent(id, { event: "approved" });
    await waitForStatus(id, "completed");
    await expectRefused(id, {}, 409, "conflict");
    await expectRefused(id, { fromStep: "approval" }, 409, "conflict");
  });

  it("with 409 for a compensated workflow, changing nothing", async () => {
    mockRemote((call) => (pathOf(call.url) === "/charge" ? json({ error: "declined" }, 402) : json({ ok: true })));
    const { id } = await start({
      name: "redrive-compensated",
      defaults: FAST,
      steps: [httpStep("reserve", { compensate: { type: "http", url: `${REMOTE}/release` } }), httpStep("charge")],
    });
    await waitForStatus(id, "compensated");
    await expectRefused(id, {}, 409, "conflict");
  });

  it("with 409 for a workflow that has not ended (running or paused), changing nothing", async () => {
    const { id } = await start({ name: "redrive-open", steps: [waitStep("approval", { event: "approved", timeoutMs: DAY })] });
    await expectRefused(id, {}, 409, "conflict");
    expect((await control(id, "pause")).status).toBe(202);
    await expectRefused(id, {}, 409, "conflict");
  });

  it("with 404 for a fromStep the workflow does not have, changing nothing", async () => {
    const { id } = await start({ name: "redrive-unknown-step", onFailure: "fail", steps: [waitStep("approval", { event: "approved", timeoutMs: HOUR })] });
    await elapse(id, HOUR);
    await waitForStatus(id, "failed");
    await expectRefused(id, { fromStep: "nope" }, 404, "not_found");
  });
});
