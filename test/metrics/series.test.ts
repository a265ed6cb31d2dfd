// GET /v1/metrics/series against a known mix of workflows run through the real queue, agents, alarms and D1 index:
// the minutes the index writes keep add up to exactly what was run, each end in the minute it happened. Deadlines are
// passed by moving time (../helpers/time.ts), not waited for.
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { api, bearer, getWorkflow, start, startAs, uniqueId, waitForStatus } from "../helpers/api";
import { indexRow } from "../helpers/index-db";
import { FAST, PATIENT } from "../helpers/policies";
import { watchSends } from "../helpers/queue";
import { json, mockRemote, REMOTE } from "../helpers/remote";
import { schedulerStub } from "../helpers/scheduler";
import { elapse } from "../helpers/time";

const MINUTE = 60_000;
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/** `/flaky` answers 503 twice per idempotency key, then 200; `/decline` 422 (permanent); anything else 200. */
function remoteAnswer(path: string, n: number): Response {
  if (path === "/flaky") return n <= 2 ? json({ error: "busy" }, 503) : json({ ok: true });
  if (path === "/decline") return json({ error: "declined" }, 422);
  return json({ ok: true });
}

const call = (path: string) => ({ type: "http", url: `${REMOTE}${path}` });
const only = (path: string, defaults: unknown, extra: Record<string, unknown> = {}) => ({ name: `series${path.replace("/", "-")}`, defaults, ...extra, steps: [{ id: "only", action: call(path) }] });
const waiting = { name: "series-waiting", defaults: FAST, steps: [{ id: "wait", waitForEvent: { event: "never", timeoutMs: 3_600_000 } }] };
const START_TO_CLOSE = { ...PATIENT, timeouts: { startToCloseMs: 60_000, heartbeatMs: 600_000 } };

const ids = {
  clean: uniqueId("clean"),
  retried: uniqueId("retried"),
  timedOut: uniqueId("timed-out"),
  compensated: uniqueId("compensated"),
  failed: uniqueId("failed"),
  cancelled: uniqueId("cancelled"),
  terminated: uniqueId("terminated"),
  escalated: uniqueId("escalated"),
};
const FINAL: Record<keyof typeof ids, string> = {
  clean: "completed",
  retried: "completed",
  timedOut: "completed",
  compensated: "compensated",
  failed: "failed",
  cancelled: "cancelled",
  terminated: "terminated",
  escalated: "needs_attention",
};

let startedAt: number;
let alphasWorkflow: string;

beforeAll(async () => {
  startedAt = Date.now();
  mockRemote((c, n) => remoteAnswer(new URL(c.url).pathname, n));
  // The timed-out workflow's first message is kept from the queue: the test claims it as an agent that then dies.
  const held = new Set([ids.timedOut]);
  watchSends((message) => held.delete(message.workflowId));

  await start(only("/ok", FAST), { id: ids.clean });
  await start(only("/flaky", FAST), { id: ids.retried });
  await start(
    { name: "series-saga", defaults: FAST, onFailure: "compensate", steps: [{ id: "reserve", action: call("/reserve"), compensate: call("/release") }, { id: "charge", dependsOn: ["reserve"], action: call("/decline") }] },
    { id: ids.compensated },
  );
  await start(only("/decline", FAST, { onFailure: "fail" }), { id: ids.failed });
  await start(only("/decline", FAST, { onFailure: "escalate" }), { id: ids.escalated });
  await start(waiting, { id: ids.cancelled });
  await start(waiting, { id: ids.terminated });
  alphasWorkflow = await startAs("alpha", only("/ok", FAST));

  await start(only("/ok", START_TO_CLOSE), { id: ids.timedOut });
  expect((await schedulerStub(ids.timedOut).claim("only", 1)).ok).toBe(true);
  await elapse(ids.timedOut, START_TO_CLOSE.timeouts.startToCloseMs + 40);
  await elapse(ids.timedOut, PATIENT.retry.initialIntervalMs);

  await waitForStatus(ids.cancelled, "running");
  expect((await api("POST", `/v1/workflows/${ids.cancelled}/cancel`)).status).toBeLessThan(300);
  expect((await api("POST", `/v1/workflows/${ids.terminated}/terminate`, { reason: "series test" })).status).toBeLessThan(300);

  for (const [name, id] of Object.entries(ids)) await waitForStatus(id, FINAL[name as keyof typeof ids]);
  // The index (and so the series) follows each workflow through its outbox, just after each commit.
  await vi.waitFor(
    async () => {
      for (const [name, id] of Object.entries(ids)) expect((await indexRow(id))?.status).toBe(FINAL[name as keyof typeof ids]);
      expect((await indexRow(alphasWorkflow, "alpha"))?.status).toBe("completed");
    },
    { timeout: 10_000, interval: 50 },
  );
}, 60_000);

afterAll(() => vi.restoreAllMocks());

const series = (query: string, tenant: "default" | "alpha" | "beta" = "default") => api("GET", `/v1/metrics/series${query}`, undefined, { headers: bearer(tenant) });

/** Since a day before the test, to a minute after now, one point per day. */
const wholeRun = () => `?from=${startedAt - DAY}&to=${Date.now() + MINUTE}&stepMs=${DAY}`;

describe("GET /v1/metrics/series", () => {
  it("adds up over the range to exactly the workflows that ran, and to the figures of GET /v1/metrics", async () => {
    const [{ status, body }, metrics] = await Promise.all([series(wholeRun()), api("GET", "/v1/metrics")]);

    expect(status).toBe(200);
    expect(body.total).toMatchObject({
      started: 8,
      completed: 3,
      failed: 1,
      compensated: 1,
      cancelled: 1,
      terminated: 1,
      // 1 clean + 3 flaky + 2 timed out + 3 saga + 1 failed + 1 escalated.
      attempts: 11,
      retries: 3,
      timeouts: { heartbeat: 0, start_to_close: 1, schedule_to_start: 0, stalled: 0 },
      compensations: 1,
      escalations: 1,
    });
    const { steps, compensations, escalations, detectionLatenessMs, workflows } = metrics.body;
    expect(body.total).toMatchObject({ attempts: steps.attempts, retries: steps.retries, timeouts: steps.timeouts, compensations, escalations, detectionLatenessMs, started: workflows.started });
    expect(body.total.detectionLatenessMs.count).toBe(1);
  });

  it("is the sum of its points, and each point the sum of the minutes it covers", async () => {
    const to = Date.now() + MINUTE;
    const byDay = (await series(`?from=${startedAt - DAY}&to=${to}&stepMs=${DAY}`)).body;
    // Nothing ran before the test began.
    const byMinute = (await series(`?from=${startedAt - 60 * MINUTE}&to=${to}`)).body;

    for (const field of ["started", "completed", "failed", "compensated", "cancelled", "terminated", "attempts", "retries", "compensations", "escalations"]) {
      const sum = (points: Record<string, number>[]) => points.reduce((total, point) => total + point[field]!, 0);
      expect(sum(byDay.series), field).toBe(byDay.total[field]);
      expect(sum(byMinute.series), field).toBe(byDay.total[field]);
    }
  });

  it("counts each workflow's end in the minute it ended, and fills every other minute with zeros", async () => {
    const ended = await Promise.all(Object.values(ids).map((id) => getWorkflow(id)));
    const expected = new Map<number, Record<string, number>>();
    for (const workflow of ended.filter((one) => one.endedAt !== undefined)) {
      const minute = Math.floor(workflow.endedAt / MINUTE) * MINUTE;
      const counts = expected.get(minute) ?? {};
      counts[workflow.status] = (counts[workflow.status] ?? 0) + 1;
      expected.set(minute, counts);
    }
    const from = Math.min(...expected.keys()) - 10 * MINUTE;
    const { body } = await series(`?from=${from}&to=${Math.max(...expected.keys()) + 10 * MINUTE}`);

    expect(body.series.length).toBe(body.series.at(-1).at / MINUTE - from / MINUTE + 1);
    body.series.forEach((point: { at: number }, i: number) => expect(point.at).toBe(from + i * MINUTE));
    for (const point of body.series) {
      const outcomes = { completed: point.completed, failed: point.failed, compensated: point.compensated, cancelled: point.cancelled, terminated: point.terminated };
      expect(outcomes, new Date(point.at).toISOString()).toEqual({ completed: 0, failed: 0, compensated: 0, cancelled: 0, terminated: 0, ...expected.get(point.at) });
    }
  });

  it("answers the last hour a minute a point when asked nothing, and zeros before anything ran", async () => {
    const asked = Date.now();
    const { status, body } = await series("");
    expect(status).toBe(200);
    expect(body.stepMs).toBe(MINUTE);
    expect(body.series).toHaveLength(60);
    expect(body.series.at(-1).at).toBe(Math.floor(asked / MINUTE) * MINUTE);
    expect(body.to - body.from).toBe(60 * MINUTE);

    const dayBefore = Math.floor(startedAt / HOUR) * HOUR - 2 * DAY;
    const before = (await series(`?from=${new Date(dayBefore).toISOString()}&to=${dayBefore + DAY}&stepMs=${HOUR}`)).body;
    expect(before.series).toHaveLength(24);
    for (const point of before.series) expect(point).toMatchObject({ started: 0, completed: 0, attempts: 0, detectionLatenessMs: { count: 0, p50: null, p99: null, max: null }, queueLagMs: null });
  });

  it("takes epoch milliseconds or ISO 8601, from taken back to its minute", async () => {
    const iso = await series("?from=2024-05-01T12:00:30Z&to=2024-05-01T14:05:00%2B02:00&stepMs=60000");
    expect(iso.status).toBe(200);
    expect(iso.body).toMatchObject({ from: Date.parse("2024-05-01T12:00:00Z"), to: Date.parse("2024-05-01T12:05:00Z"), stepMs: MINUTE });
    expect(iso.body.series).toHaveLength(5);
    const epoch = await series(`?from=${Date.parse("2024-05-01T12:00:30Z")}&to=${Date.parse("2024-05-01T12:05:00Z")}&stepMs=120000`);
    expect(epoch.body).toMatchObject({ from: Date.parse("2024-05-01T12:00:00Z"), to: Date.parse("2024-05-01T12:06:00Z"), stepMs: 120_000 });
    expect(epoch.body.series.map((point: { at: number }) => point.at)).toEqual([0, 1, 2].map((i) => Date.parse("2024-05-01T12:00:00Z") + i * 120_000));
  });

  it.each([
    ["a from that is no date", "?from=yesterday", "from"],
    ["an ISO date in a 13th month", "?from=2024-13-01T00:00:00Z", "from"],
    ["a date-time without its time zone", "?to=2024-05-01T12:00:00", "to"],
    ["a to before from", "?from=2024-05-01T12:00:00Z&to=2024-05-01T11:00:00Z", "to"],
    ["a step that is not whole minutes", "?stepMs=90000", "stepMs"],
    ["a step under a minute", "?stepMs=1000", "stepMs"],
    ["a step over a day", "?stepMs=172800000", "stepMs"],
    ["a step that is not a number", "?stepMs=hourly", "stepMs"],
    ["more than 1 440 points", "?from=2024-05-01T00:00:00Z&to=2024-05-03T00:00:00Z&stepMs=60000", "stepMs"],
    ["a parameter it does not know", "?step=60000", ""],
  ])("refuses %s with a 400 naming the field", async (_name, query, field) => {
    const { status, body } = await series(query);
    expect(status).toBe(400);
    expect(body.error.code).toBe("validation_failed");
    if (field) {
      expect(body.error.message).toMatch(new RegExp(`^Invalid request: ${field} `));
      expect(body.error.details.map((issue: { path: string[] }) => issue.path)).toContainEqual([field]);
    }
  });

  it("says which step would do when a range has too many points", async () => {
    const { body } = await series("?from=2024-05-01T00:00:00Z&to=2024-05-03T00:00:00Z&stepMs=60000");
    expect(body.error.message).toMatch(/^Invalid request: stepMs must give at most 1440 points, and 60000 gives 2880 from 2024-05-01T00:00:00\.000Z to 2024-05-03T00:00:00\.000Z: use a stepMs of at least 120000, or a shorter range\.$/);
  });

  it("shows each tenant only its own workflows", async () => {
    const [alpha, beta] = await Promise.all([series(wholeRun(), "alpha"), series(wholeRun(), "beta")]);

    expect(alpha.body.total).toMatchObject({ started: 1, completed: 1, failed: 0, attempts: 1, retries: 0 });
    expect(beta.body.total).toMatchObject({ started: 0, completed: 0, compensated: 0, attempts: 0, retries: 0, compensations: 0, escalations: 0, detectionLatenessMs: { count: 0 } });
  });

  it("refuses a caller without a token with 401", async () => {
    const response = await exports.default.fetch("http://shepherd.test/v1/metrics/series");
    expect(response.status).toBe(401);
  });
});

describe("the task queues' lag in the series", () => {
  it("answers each step's worst lag sampled, written by the monitor's alarm, the same for every tenant", async () => {
    const monitor = env.QUEUE_LAG.getByName("task-queue");
    const hourAgo = Math.floor((Date.now() - 3_600_000) / MINUTE) * MINUTE;
    await monitor.record({ queue: "shepherd-tasks", lagMs: 300, at: hourAgo + 5_000 });
    await monitor.record({ queue: "shepherd-tasks-1", lagMs: 1_200, at: hourAgo + 20_000 });
    await monitor.record({ queue: "shepherd-tasks", lagMs: 100, at: hourAgo + 40_000 });
    await monitor.record({ queue: "shepherd-tasks", lagMs: 50, at: hourAgo + 2 * MINUTE + 1_000 });
    const query = `?from=${hourAgo}&to=${hourAgo + 4 * MINUTE}`;
    expect((await series(query)).body.series.map((point: { queueLagMs: number | null }) => point.queueLagMs)).toEqual([null, null, null, null]);

    expect(await runDurableObjectAlarm(monitor)).toBe(true);

    const [own, other] = await Promise.all([series(query), series(query, "beta")]);
    expect(own.body.series.map((point: { queueLagMs: number | null }) => point.queueLagMs)).toEqual([1_200, null, 50, null]);
    expect(own.body.total.queueLagMs).toBe(1_200);
    expect(other.body.series).toEqual(own.body.series.map((point: { queueLagMs: number | null; at: number }) => expect.objectContaining({ at: point.at, queueLagMs: point.queueLagMs })));
    // Everything was written: no alarm is left for it.
    expect(await runDurableObjectAlarm(monitor)).toBe(false);
  });

  it("keeps a minute D1 refused for the monitor's next alarm", async () => {
    const monitor = env.QUEUE_LAG.getByName("task-queue");
    const twoHoursAgo = Math.floor((Date.now() - 2 * HOUR) / MINUTE) * MINUTE;
    const lagAt = async () => (await series(`?from=${twoHoursAgo}&to=${twoHoursAgo + MINUTE}`)).body.series[0].queueLagMs;
    await runInDurableObject(monitor, (instance) => {
      vi.spyOn((instance as unknown as { env: Env }).env.DB, "batch").mockRejectedValueOnce(new Error("D1_ERROR: injected outage"));
    });
    await monitor.record({ queue: "shepherd-tasks", lagMs: 700, at: twoHoursAgo + 1_000 });

    expect(await runDurableObjectAlarm(monitor)).toBe(true);
    expect(await lagAt()).toBeNull();
    expect(await runDurableObjectAlarm(monitor)).toBe(true);
    expect(await lagAt()).toBe(700);
  });
});
