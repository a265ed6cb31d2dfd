// A delayed start (`startAt`, `startDelayMs`) through the real Worker, object, alarm, queue and D1 index: the
// workflow waits `scheduled` with nothing sent, and its alarm starts it. Time is moved, not waited for.
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { forgetQueueLagReads } from "../../src/admission/queue-lag-monitor";
import { api, getWorkflow, historyOf, uniqueId, waitForStatus } from "../helpers/api";
import { indexRow } from "../helpers/index-db";
import { watchSends } from "../helpers/queue";
import { httpStep, json, mockRemote } from "../helpers/remote";
import { alarmOf } from "../helpers/scheduler";
import { loseAlarm } from "../helpers/stranded";
import { backdate, elapse, fireAlarm, runCron, sleep } from "../helpers/time";
import { control, DAY, HOUR, MINUTE, stepOf } from "../helpers/workflow-language";

afterEach(() => vi.restoreAllMocks());

/** The sweep's default grace period (SWEEP_GRACE_MS is not set in the tests). */
const SWEEP_GRACE_MS = 60_000;

const twoSteps = (name = "scheduled-order") => ({ name, steps: [httpStep("reserve"), httpStep("ship")] });

function startLater(fields: Record<string, unknown>, name?: string) {
  return api("POST", "/v1/workflows", { definition: twoSteps(name), ...fields });
}

async function scheduled(fields: Record<string, unknown>, name?: string) {
  const id = (fields.id as string | undefined) ?? uniqueId("later");
  const response = await startLater({ id, ...fields }, name);
  expect(response.status, JSON.stringify(response.body)).toBe(201);
  return { id, workflow: response.body };
}

const typesOf = async (id: string) => (await historyOf(id)).map((event) => event.type);

describe("a start with startDelayMs", () => {
  it("waits scheduled with nothing dispatched, its alarm set for its start time; an early alarm changes nothing", async () => {
    const remote = mockRemote(() => json({ ok: true }));
    const queue = watchSends();
    const before = Date.now();
    const { id, workflow } = await scheduled({ startDelayMs: 10 * MINUTE });

    expect(workflow).toMatchObject({ status: "scheduled", startAt: expect.any(Number) });
    expect(workflow.startAt - before).toBeGreaterThanOrEqual(10 * MINUTE);
    expect(workflow.startAt - Date.now()).toBeLessThanOrEqual(10 * MINUTE);
    expect(workflow.steps.map((step: { status: string }) => step.status)).toEqual(["pending", "pending"]);
    // Never later than the start; first the lease of the start's own index write (see SEND_LEASE_MS).
    expect(await alarmOf(id)).toBeLessThanOrEqual(workflow.startAt);

    // That early alarm finds nothing due and sets the start time.
    await fireAlarm(id);

    expect((await getWorkflow(id)).status).toBe("scheduled");
    expect(await alarmOf(id)).toBe(workflow.startAt);
    expect(queue.of(id)).toEqual([]);
    expect(remote.calls).toEqual([]);
    expect(await typesOf(id)).toEqual(["workflow_scheduled"]);
  });

  it("is started by its alarm at its start time, then runs to the end", async () => {
    const remote = mockRemote(() => json({ ok: true }));
    const { id, workflow } = await scheduled({ startDelayMs: 10 * MINUTE });

    await elapse(id, 10 * MINUTE);

    const started = await getWorkflow(id);
    expect(started.status).not.toBe("scheduled");
    expect(stepOf(started, "reserve").attempts).toHaveLength(1);
    const history = await historyOf(id);
    expect(history.map((event) => event.type).slice(0, 3)).toEqual(["workflow_scheduled", "workflow_started", "step_scheduled"]);
    expect(history[0]?.data).toMatchObject({ startAt: workflow.startAt });
    // Moved back with every stored time: the start time, as the history says it, is when the alarm started it.
    expect(history[1]?.data).toMatchObject({ name: "scheduled-order", startAt: workflow.startAt - 10 * MINUTE });
    await waitForStatus(id, "completed");
    expect(remote.calls.map((call) => new URL(call.url).pathname)).toEqual(["/reserve", "/ship"]);
  });
});

describe("a start with startAt", () => {
  it("takes an ISO 8601 date-time, or epoch milliseconds", async () => {
    const at = new Date(Date.now() + 2 * DAY);
    at.setUTCMilliseconds(0);

    const iso = await scheduled({ startAt: at.toISOString() });
    const epoch = await scheduled({ startAt: at.getTime() });

    expect(iso.workflow).toMatchObject({ status: "scheduled", startAt: at.getTime() });
    expect(epoch.workflow).toMatchObject({ status: "scheduled", startAt: at.getTime() });
    await fireAlarm(iso.id);
    expect(await alarmOf(iso.id)).toBe(at.getTime());
  });

  it("answers the same body again with 200 and the workflow it started, even once its startAt has passed", async () => {
    mockRemote(() => json({ ok: true }));
    const id = uniqueId("again");
    const body = { id, startAt: Date.now() + 300 };
    expect((await startLater(body)).status).toBe(201);
    // Real time, not moved: the repeat must reach the service after the time it names.
    await sleep(400);

    const again = await startLater(body);

    expect(again.status, JSON.stringify(again.body)).toBe(200);
    expect(again.body.id).toBe(id);
    expect((await startLater({ ...body, input: { other: true } })).status).toBe(409);
  });
});

describe("a scheduled workflow", () => {
  it("is cancelled at once: nothing ran, nothing is compensated, no alarm is left", async () => {
    const remote = mockRemote(() => json({ ok: true }));
    const { id } = await scheduled({ startDelayMs: DAY });

    const cancelled = await api("POST", `/v1/workflows/${id}/cancel`);

    expect(cancelled.status, JSON.stringify(cancelled.body)).toBe(202);
    expect(cancelled.body).toMatchObject({ status: "cancelled", endedAt: expect.any(Number) });
    expect(cancelled.body.steps.map((step: { status: string }) => step.status)).toEqual(["cancelled", "cancelled"]);
    expect(await typesOf(id)).toEqual(["workflow_scheduled", "operator_action", "workflow_cancelled"]);
    expect(await alarmOf(id)).toBeNull();
    expect(remote.calls).toEqual([]);
  });

  it("is terminated at once and never starts", async () => {
    const remote = mockRemote(() => json({ ok: true }));
    const queue = watchSends();
    const { id } = await scheduled({ startDelayMs: MINUTE });

    const terminated = await control(id, "terminate", { reason: "not wanted" });
    await backdate(id, { ms: 2 * MINUTE });
    await fireAlarm(id);

    expect(terminated.status, JSON.stringify(terminated.body)).toBe(202);
    expect(await getWorkflow(id)).toMatchObject({ status: "terminated", error: { message: "not wanted" } });
    expect(await typesOf(id)).toEqual(["workflow_scheduled", "workflow_terminated"]);
    expect(queue.of(id)).toEqual([]);
    expect(remote.calls).toEqual([]);
  });

  it("refuses pause and resume with 409: nothing runs to pause", async () => {
    const { id } = await scheduled({ startDelayMs: DAY });

    const paused = await control(id, "pause");
    const resumed = await control(id, "resume");

    expect(paused.status).toBe(409);
    expect(paused.body.error.message).toContain("has not started");
    expect(resumed.status).toBe(409);
    expect((await getWorkflow(id)).status).toBe("scheduled");
  });

  it("is listed with status=scheduled and its start time, in the index as in the view, until it starts", async () => {
    mockRemote(() => json({ ok: true }));
    const name = uniqueId("listed");
    const { id, workflow } = await scheduled({ startDelayMs: 5 * MINUTE }, name);
    const running = uniqueId("now");
    expect((await startLater({ id: running }, name)).status).toBe(201);

    const listed = await api("GET", `/v1/workflows?status=scheduled&name=${name}`);

    expect(listed.status).toBe(200);
    expect(listed.body.workflows).toEqual([expect.objectContaining({ id, status: "scheduled", startAt: workflow.startAt })]);
    expect(await indexRow(id)).toMatchObject({ status: "scheduled", start_at: workflow.startAt });

    await elapse(id, 5 * MINUTE);

    expect((await api("GET", `/v1/workflows?status=scheduled&name=${name}`)).body.workflows).toEqual([]);
  });
});

describe("a scheduled workflow whose alarm was lost", () => {
  it("case 16 (lost alarm): is found by the cron sweep once its start time and the grace period passed, and started", async () => {
    mockRemote(() => json({ ok: true }));
    const { id } = await scheduled({ startDelayMs: HOUR });
    await vi.waitFor(async () => expect((await indexRow(id))?.next_deadline_at).toEqual(expect.any(Number)));
    await loseAlarm(id);
    await backdate(id, { ms: HOUR });

    await runCron(Date.now() + SWEEP_GRACE_MS + 1_000);

    expect(await typesOf(id)).toEqual(expect.arrayContaining(["workflow_scheduled", "workflow_started"]));
    await waitForStatus(id, "completed");
  });
});

describe("the admission of a scheduled start when it falls due", () => {
  /** The consumers' report of the task queue: its lag, and whose deliveries filled it (see case 33). */
  async function recordGauge(lagMs: number, deliveries: { tenant: string; name: string; count: number }[] = []) {
    await env.QUEUE_LAG.getByName("task-queue").record({ queue: "shepherd-tasks", lagMs, at: Date.now() + 60_000, deliveries });
    forgetQueueLagReads();
  }

  afterEach(async () => {
    await sleep(2);
    await recordGauge(0);
  });

  it("defers it while the queue is too far behind with its tenant's and name's work, then starts it, never dropping it", async () => {
    mockRemote(() => json({ ok: true }));
    const name = uniqueId("deferred");
    const { id } = await scheduled({ startDelayMs: MINUTE }, name);
    // 15 s past the default bound of 10 s, all of it this tenant's workflows of this name.
    await recordGauge(25_000, [{ tenant: "default", name, count: 500 }]);

    await elapse(id, MINUTE);

    expect((await getWorkflow(id)).status).toBe("scheduled");
    const deferred = (await historyOf(id)).find((event) => event.type === "workflow_start_deferred");
    expect(deferred?.data).toMatchObject({ lagMs: 25_000 });
    const diagnosis = await api("GET", `/v1/workflows/${id}/diagnosis`);
    expect(diagnosis.body.blockedOn).toEqual([expect.objectContaining({ reason: "scheduled_start" })]);

    await sleep(2);
    await recordGauge(0);
    await elapse(id, 15_000);

    expect(await typesOf(id)).toEqual(expect.arrayContaining(["workflow_start_deferred", "workflow_started"]));
    await waitForStatus(id, "completed");
  });
});

describe("the start times a start may ask for", () => {
  const cases: [string, Record<string, unknown>, string][] = [
    ["both startAt and startDelayMs", { startAt: Date.now() + DAY, startDelayMs: MINUTE }, "startDelayMs"],
    ["a startAt in the past", { startAt: Date.now() - MINUTE }, "startAt"],
    ["a startAt more than 365 days ahead", { startAt: new Date(Date.now() + 366 * DAY).toISOString() }, "startAt"],
    ["a startAt that is no time", { startAt: "next tuesday" }, "startAt"],
    ["a negative startAt", { startAt: -1 }, "startAt"],
    ["a startDelayMs more than 365 days", { startDelayMs: 366 * DAY }, "startDelayMs"],
    ["a negative startDelayMs", { startDelayMs: -5 }, "startDelayMs"],
    ["a startDelayMs that is no whole number", { startDelayMs: 1.5 }, "startDelayMs"],
  ];

  it.each(cases)("refuses %s with 400 naming the field, and stores nothing", async (_name, fields, field) => {
    const id = uniqueId("refused");

    const response = await startLater({ id, ...fields });

    expect(response.status, JSON.stringify(response.body)).toBe(400);
    expect(response.body.error.code).toBe("validation_failed");
    expect(response.body.error.message).toContain(field);
    expect(response.body.error.details[0].path).toEqual([field]);
    expect((await api("GET", `/v1/workflows/${id}`)).status).toBe(404);
  });
});
