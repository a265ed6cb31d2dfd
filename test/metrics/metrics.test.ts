// GET /v1/metrics against a known mix of workflows run through the real queue, agents, alarms and D1 index: every
// figure must be exactly what was run. Deadlines are passed by moving time (../helpers/time.ts), not waited for.
import { exports } from "cloudflare:workers";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { LATENESS_BOUNDS_MS } from "../../src/domain/machine/metrics";
import { api, bearer, historyOf, start, startAs, uniqueId, waitForStatus, type TestTenant } from "../helpers/api";
import { indexRow } from "../helpers/index-db";
import { FAST, PATIENT } from "../helpers/policies";
import { watchSends } from "../helpers/queue";
import { json, mockRemote, REMOTE } from "../helpers/remote";
import { schedulerStub } from "../helpers/scheduler";
import { elapse } from "../helpers/time";

/** `/flaky` answers 503 twice per idempotency key, then 200; `/decline` 422 (permanent); anything else 200. */
function remoteAnswer(path: string, n: number): Response {
  if (path === "/flaky") return n <= 2 ? json({ error: "busy" }, 503) : json({ ok: true });
  if (path === "/decline") return json({ error: "declined" }, 422);
  return json({ ok: true });
}

const call = (path: string) => ({ type: "http", url: `${REMOTE}${path}` });
const only = (path: string, defaults: unknown, extra: Record<string, unknown> = {}) => ({ name: `metrics${path.replace("/", "-")}`, defaults, ...extra, steps: [{ id: "only", action: call(path) }] });

/** The deadline tests: one deadline each, passed by `overdueBy` more than it allows, then the retry's backoff. */
const HEARTBEAT = { ...PATIENT, timeouts: { startToCloseMs: 300_000, heartbeatMs: 30_000 } };
const START_TO_CLOSE = { ...PATIENT, timeouts: { startToCloseMs: 60_000, heartbeatMs: 600_000 } };
const SCHEDULE_TO_START = { ...PATIENT, timeouts: { scheduleToStartMs: 5_000, startToCloseMs: 300_000, heartbeatMs: 30_000 } };

const ids = {
  clean: uniqueId("clean"),
  retried: uniqueId("retried"),
  heartbeat: uniqueId("heartbeat"),
  startToClose: uniqueId("start-to-close"),
  scheduleToStart: uniqueId("schedule-to-start"),
  compensated: uniqueId("compensated"),
  escalated: uniqueId("escalated"),
};
const FINAL: Record<keyof typeof ids, string> = {
  clean: "completed",
  retried: "completed",
  heartbeat: "completed",
  startToClose: "completed",
  scheduleToStart: "completed",
  compensated: "compensated",
  escalated: "needs_attention",
};

/** Every history entry's overdueMs across the mix: what the lateness figures must be made of. */
let overdue: number[];
let otherTenantsWorkflow: string;

beforeAll(async () => {
  mockRemote((c, n) => remoteAnswer(new URL(c.url).pathname, n));
  // The first message of each deadline workflow is kept from the queue: no agent takes that attempt, or the test
  // claims it itself and then goes silent, as a dead agent would.
  const heldFor = new Set([ids.heartbeat, ids.startToClose, ids.scheduleToStart]);
  watchSends((message) => heldFor.delete(message.workflowId));

  await start(only("/ok", FAST), { id: ids.clean });
  await start(only("/flaky", FAST), { id: ids.retried });
  await start(
    { name: "metrics-saga", defaults: FAST, onFailure: "compensate", steps: [{ id: "reserve", action: call("/reserve"), compensate: call("/release") }, { id: "charge", dependsOn: ["reserve"], action: call("/decline") }] },
    { id: ids.compensated },
  );
  await start(only("/decline", FAST, { onFailure: "escalate" }), { id: ids.escalated });
  otherTenantsWorkflow = await startAs("alpha", only("/ok", FAST));

  await runSilentAttempt(ids.heartbeat, HEARTBEAT, HEARTBEAT.timeouts.heartbeatMs + 1_500);
  await runSilentAttempt(ids.startToClose, START_TO_CLOSE, START_TO_CLOSE.timeouts.startToCloseMs + 40);
  await start(only("/ok", SCHEDULE_TO_START), { id: ids.scheduleToStart });
  await elapse(ids.scheduleToStart, SCHEDULE_TO_START.timeouts.scheduleToStartMs + 300);
  await elapse(ids.scheduleToStart, PATIENT.retry.initialIntervalMs);

  for (const [name, id] of Object.entries(ids)) await waitForStatus(id, FINAL[name as keyof typeof ids]);
  // The index follows each workflow through its outbox, just after each commit.
  await vi.waitFor(
    async () => {
      for (const [name, id] of Object.entries(ids)) expect((await indexRow(id))?.status).toBe(FINAL[name as keyof typeof ids]);
      expect((await indexRow(otherTenantsWorkflow, "alpha"))?.status).toBe("completed");
    },
    { timeout: 10_000, interval: 50 },
  );
  const histories = await Promise.all(Object.values(ids).map((id) => historyOf(id)));
  overdue = histories.flat().flatMap((event) => (typeof event.data?.overdueMs === "number" ? [event.data.overdueMs as number] : []));
}, 60_000);

afterAll(() => vi.restoreAllMocks());

/** Starts a one-step workflow, claims its attempt as an agent that then dies, and lets its deadline pass and its retry run. */
async function runSilentAttempt(id: string, defaults: typeof PATIENT, pastDeadline: number) {
  await start(only("/ok", defaults), { id });
  expect((await schedulerStub(id).claim("only", 1)).ok).toBe(true);
  await elapse(id, pastDeadline);
  await elapse(id, PATIENT.retry.initialIntervalMs);
}

async function metricsText(tenant: TestTenant) {
  const response = await exports.default.fetch("http://shepherd.test/v1/metrics", { headers: { ...bearer(tenant), Accept: "text/plain" } });
  return { status: response.status, type: response.headers.get("Content-Type"), text: await response.text() };
}

/** `name{labels} value` lines of the text format, by `name{labels}`. */
function samples(text: string): Map<string, number> {
  const lines = text.split("\n").filter((line) => line !== "" && !line.startsWith("#"));
  return new Map(lines.map((line) => [line.slice(0, line.lastIndexOf(" ")), Number(line.slice(line.lastIndexOf(" ") + 1))]));
}

/** The quantile as the contract states it: the bucket upper bound of the observation of that rank, at most the max. */
function bucketBound(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  const value = sorted[Math.ceil(q * sorted.length) - 1]!;
  return Math.min(LATENESS_BOUNDS_MS.find((bound) => value <= bound) ?? Infinity, Math.max(...values));
}

describe("GET /v1/metrics", () => {
  it("counts exactly the workflows, attempts, retries, timeouts, compensations and escalations that were run", async () => {
    const response = await api("GET", "/v1/metrics");

    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({
      workflows: {
        byStatus: { running: 0, paused: 0, compensating: 0, needs_attention: 1, completed: 5, failed: 0, compensated: 1, cancelled: 0, terminated: 0 },
        started: 7,
        ended: 6,
      },
      // 1 clean + 3 flaky + 2 per deadline workflow but schedule-to-start (its first attempt never began) + 3 saga + 1.
      steps: { attempts: 13, retries: 5, timeouts: { heartbeat: 1, start_to_close: 1, schedule_to_start: 1, stalled: 0 } },
      compensations: 1,
      escalations: 1,
    });
    expect(response.body.asOf).toEqual(expect.any(Number));
  });

  it("agrees with the workflows' histories", async () => {
    const histories = (await Promise.all(Object.values(ids).map((id) => historyOf(id)))).flat();
    const { body } = await api("GET", "/v1/metrics");

    expect(body.steps.attempts).toBe(histories.filter((event) => event.type === "step_started").length);
    expect(body.steps.retries).toBe(histories.filter((event) => event.type === "step_retry_scheduled").length);
    expect(body.compensations).toBe(histories.filter((event) => event.type === "step_compensated").length);
  });

  it("reports detection lateness from the deadlines' overdueMs: its count, its max and bucket-bound percentiles", async () => {
    const { body } = await api("GET", "/v1/metrics");

    expect(overdue).toHaveLength(3);
    expect(body.detectionLatenessMs).toEqual({ count: 3, max: Math.max(...overdue), p50: bucketBound(overdue, 0.5), p99: bucketBound(overdue, 0.99) });
    expect(body.detectionLatenessMs.max).toBeGreaterThanOrEqual(1_500);
  });

  it("serves the same figures in Prometheus' text format with Accept: text/plain", async () => {
    const { status, type, text } = await metricsText("default");
    const values = samples(text);

    expect(status).toBe(200);
    expect(type).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(values.get('shepherd_workflows{status="completed"}')).toBe(5);
    expect(values.get('shepherd_workflows{status="needs_attention"}')).toBe(1);
    expect(values.get('shepherd_workflows{status="running"}')).toBe(0);
    expect(values.get("shepherd_workflows_started_total")).toBe(7);
    expect(values.get("shepherd_workflows_ended")).toBe(6);
    expect(values.get("shepherd_step_attempts_total")).toBe(13);
    expect(values.get("shepherd_step_retries_total")).toBe(5);
    for (const kind of ["heartbeat", "start_to_close", "schedule_to_start"]) expect(values.get(`shepherd_step_timeouts_total{kind="${kind}"}`)).toBe(1);
    expect(values.get('shepherd_step_timeouts_total{kind="stalled"}')).toBe(0);
    expect(values.get("shepherd_compensations_total")).toBe(1);
    expect(values.get("shepherd_escalations_total")).toBe(1);
    expect(values.get("shepherd_detection_lateness_ms_count")).toBe(3);
    expect(values.get("shepherd_detection_lateness_ms_sum")).toBe(overdue.reduce((a, b) => a + b, 0));
    expect(values.get("shepherd_detection_lateness_max_ms")).toBe(Math.max(...overdue));
  });

  it("exposes detection lateness as a cumulative histogram, with HELP and TYPE for every family", async () => {
    const { text } = await metricsText("default");
    const values = samples(text);

    for (const bound of LATENESS_BOUNDS_MS) {
      expect(values.get(`shepherd_detection_lateness_ms_bucket{le="${bound}"}`), `le=${bound}`).toBe(overdue.filter((ms) => ms <= bound).length);
    }
    expect(values.get('shepherd_detection_lateness_ms_bucket{le="+Inf"}')).toBe(3);
    const families = new Set([...values.keys()].map((key) => key.replace(/\{.*$/, "").replace(/_(bucket|sum|count)$/, "")));
    for (const family of families) {
      expect(text, family).toMatch(new RegExp(`^# HELP ${family} \\S`, "m"));
      expect(text, family).toMatch(new RegExp(`^# TYPE ${family} (counter|gauge|histogram)$`, "m"));
    }
    expect(text).toMatch(/^# TYPE shepherd_detection_lateness_ms histogram$/m);
  });

  it("answers JSON unless text/plain is preferred, as Prometheus' own Accept header prefers it", async () => {
    const ask = (accept: string) => exports.default.fetch("http://shepherd.test/v1/metrics", { headers: { ...bearer(), Accept: accept } });

    expect((await ask("*/*")).headers.get("Content-Type")).toMatch(/^application\/json/);
    expect((await ask("application/json")).headers.get("Content-Type")).toMatch(/^application\/json/);
    expect((await ask("application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5,*/*;q=0.1")).headers.get("Content-Type")).toMatch(/^text\/plain/);
  });

  it("shows another tenant none of it, and only its own workflows", async () => {
    const beta = await api("GET", "/v1/metrics", undefined, { headers: bearer("beta") });
    const alpha = await api("GET", "/v1/metrics", undefined, { headers: bearer("alpha") });

    expect(beta.status).toBe(200);
    expect(beta.body).toMatchObject({
      workflows: { started: 0, ended: 0, byStatus: { completed: 0, needs_attention: 0 } },
      steps: { attempts: 0, retries: 0, timeouts: { heartbeat: 0, start_to_close: 0, schedule_to_start: 0, stalled: 0 } },
      compensations: 0,
      escalations: 0,
      detectionLatenessMs: { count: 0, p50: null, p99: null, max: null },
    });
    expect(alpha.body).toMatchObject({ workflows: { started: 1, ended: 1, byStatus: { completed: 1 } }, steps: { attempts: 1, retries: 0 } });
    expect(samples((await metricsText("beta")).text).get("shepherd_step_attempts_total")).toBe(0);
  });

  it("refuses a caller without a token with 401 in the error shape", async () => {
    const response = await exports.default.fetch("http://shepherd.test/v1/metrics");
    expect(response.status).toBe(401);
    expect(await response.json()).toMatchObject({ error: { code: "unauthorized" } });
  });
});
