// What each attempt sent and what came back (GET /v1/workflows/{id}/steps/{stepId}/attempts/{n}), through the
// real agents and objects with a fetch spy as the remote: captured where the call is made, redacted, bounded, and
// kept on the step's row by the commit that records the report.
import { afterEach, describe, expect, it, vi } from "vitest";
import { api, start, uniqueId, waitForStatus } from "../helpers/api";
import { FAST } from "../helpers/policies";
import { hang, json, mockRemote, REMOTE, type RemoteCall } from "../helpers/remote";
import { schedulerStub } from "../helpers/scheduler";

afterEach(() => vi.restoreAllMocks());

const attemptOf = (id: string, stepId: string, n: number | string) => api("GET", `/v1/workflows/${id}/steps/${stepId}/attempts/${n}`);

function charge(action: Record<string, unknown> = {}, fields: Record<string, unknown> = {}) {
  return {
    name: "exchange",
    onFailure: "fail",
    defaults: FAST,
    steps: [{ id: "charge", action: { type: "http", url: `${REMOTE}/charge`, body: { amount: "{{ input.amount }}", order: "{{ workflow.id }}" }, ...action }, ...fields }],
  };
}

describe("an http attempt's exchange", () => {
  it("keeps the request as sent: the rendered body, and headers with their credentials redacted", async () => {
    const remote = mockRemote(() => json({ chargeId: "ch_1" }, 200, { "X-Internal": "not kept" }));
    const headers = { Authorization: "Bearer sk_live_123", "X-Api-Key": "k-9", Cookie: "session=abc", "X-Trace": "t-1" };
    const { id } = await start(charge({ headers }), { input: { amount: 42 } });
    await waitForStatus(id, "completed");

    const { status, body } = await attemptOf(id, "charge", 1);
    expect(status).toBe(200);
    expect(body).toMatchObject({ workflowId: id, stepId: "charge", n: 1, kind: "action", status: "succeeded" });
    expect(body.request).toMatchObject({ method: "POST", url: `${REMOTE}/charge` });
    expect(JSON.parse(body.request.body.text)).toEqual({ amount: 42, order: id });
    expect(body.request.body).toEqual({ text: expect.any(String), bytes: body.request.body.text.length });
    expect(body.request.headers).toMatchObject({
      authorization: "[redacted]",
      "x-api-key": "[redacted]",
      cookie: "[redacted]",
      "shepherd-task-token": "[redacted]",
      "x-trace": "t-1",
      "idempotency-key": `${id}:charge`,
      "shepherd-attempt": "1",
      "content-type": "application/json",
    });
    expect(body.response).toEqual({ status: 200, headers: { "content-type": "application/json" }, body: { text: '{"chargeId":"ch_1"}', bytes: 19 } });
    // Redacted in what is kept, never in what is sent.
    expect(remote.calls[0]!.headers.authorization).toBe("Bearer sk_live_123");
    expect(JSON.stringify(body)).not.toMatch(/sk_live_123|k-9|session=abc/);
  });

  it("shows the body a 503 came with on the failed attempt, and the retry's answer on its own", async () => {
    mockRemote((_call, n) => (n === 1 ? json({ error: "down for maintenance" }, 503, { "Retry-After": "0" }) : json({ chargeId: "ch_2" })));
    const { id } = await start(charge(), { input: { amount: 7 } });
    await waitForStatus(id, "completed");

    const failed = (await attemptOf(id, "charge", 1)).body;
    expect(failed).toMatchObject({ status: "failed", error: { status: 503, retryable: true } });
    expect(failed.response).toEqual({ status: 503, headers: { "content-type": "application/json", "retry-after": "0" }, body: { text: '{"error":"down for maintenance"}', bytes: 32 } });
    expect((await attemptOf(id, "charge", 2)).body.response.body.text).toBe('{"chargeId":"ch_2"}');
  });

  it("keeps only the first 4 KiB of a large answer, says it was cut and how long it was", async () => {
    const big = JSON.stringify({ rows: "x".repeat(10_000) });
    mockRemote(() => new Response(big, { status: 200, headers: { "Content-Type": "application/json" } }));
    const { id } = await start(charge({ body: { n: "y".repeat(6_000) } }), { input: { amount: 1 } });
    const workflow = await waitForStatus(id, "completed");
    // The step's output is the whole answer; only the exchange is cut.
    expect(workflow.output.charge.rows).toHaveLength(10_000);

    const { request, response } = (await attemptOf(id, "charge", 1)).body;
    expect(response.body).toEqual({ text: big.slice(0, 4096), bytes: big.length, truncated: true });
    expect(request.body).toMatchObject({ bytes: JSON.stringify({ n: "y".repeat(6_000) }).length, truncated: true });
    expect(request.body.text).toHaveLength(4096);
  });

  it("keeps a refused redirect's request, its URL's password redacted, with no answer", async () => {
    mockRemote(() => new Response(null, { status: 302, headers: { Location: "https://user:hunter2@elsewhere.example/x?api_key=k-1&page=2" } }));
    const { id } = await start(charge(), { input: { amount: 1 } });
    await waitForStatus(id, "failed");
    const attempt = (await attemptOf(id, "charge", 1)).body;
    expect(attempt.error.message).toMatch(/target refused/);
    expect(attempt.request).toMatchObject({ method: "POST", url: "https://user:[redacted]@elsewhere.example/x?api_key=[redacted]&page=2" });
    expect(attempt.response).toBeUndefined();
  });

  it("keeps an answer that is not JSON as it came", async () => {
    mockRemote(() => new Response("<h1>Bad gateway</h1>", { status: 502, headers: { "Content-Type": "text/html" } }));
    const { id } = await start(charge({}, { retry: { maxAttempts: 1 } }), { input: { amount: 1 } });
    await waitForStatus(id, "failed");
    expect((await attemptOf(id, "charge", 1)).body.response).toEqual({ status: 502, headers: { "content-type": "text/html" }, body: { text: "<h1>Bad gateway</h1>", bytes: 20 } });
  });

  it("keeps the exchanges of the step's latest 10 attempts", async () => {
    mockRemote((_call, n) => json({ error: `busy (${n})` }, 503));
    const { id } = await start(charge({}, { retry: { ...FAST.retry, maxAttempts: 12, maxIntervalMs: 20 } }), { input: { amount: 1 } });
    await waitForStatus(id, "failed");
    const kept = await Promise.all(Array.from({ length: 12 }, async (_, i) => (await attemptOf(id, "charge", i + 1)).body.response?.body.text));
    expect(kept).toEqual([undefined, undefined, ...Array.from({ length: 10 }, (_, i) => `{"error":"busy (${i + 3})"}`)]);
  });

  it("leaves the bodies out of the workflow's view", async () => {
    mockRemote(() => json({ chargeId: "ch_3" }));
    const { id } = await start(charge(), { input: { amount: 3 } });
    const workflow = await waitForStatus(id, "completed");
    expect(Object.keys(workflow.steps[0].attempts[0]).sort()).toEqual(["endedAt", "kind", "n", "scheduledAt", "startedAt", "status"]);
  });
});

describe("a verify call's exchange", () => {
  /** Charges land but the first answer is lost; GET /charges/{id} says whether one exists. */
  function payments(effectLands: boolean) {
    return mockRemote((call: RemoteCall, n) => {
      if (call.method === "GET") return effectLands ? json({ id: "ch_v" }) : json({ error: "no such charge" }, 404);
      return n === 1 ? hang(call) : json({ id: "ch_new" });
    });
  }
  const verified = (name: string) => ({
    name,
    defaults: { ...FAST, timeouts: { startToCloseMs: 400, heartbeatMs: 150 } },
    steps: [{ id: "charge", action: { type: "http", url: `${REMOTE}/charges`, body: { amount: 42 } }, verify: { type: "http", url: `${REMOTE}/charges/{{ workflow.id }}` } }],
  });

  it("shows the verify call that found the effect, and no request of its own", async () => {
    payments(true);
    const { id } = await start(verified("verified-exchange"));
    await waitForStatus(id, "completed");
    const attempt = (await attemptOf(id, "charge", 2)).body;
    expect(attempt.verify).toMatchObject({ request: { method: "GET", url: `${REMOTE}/charges/${id}` }, response: { status: 200, body: { text: '{"id":"ch_v"}' } } });
    expect(attempt.request).toBeUndefined();
  });

  it("shows verify's 404 beside the request the attempt went on to send", async () => {
    payments(false);
    const { id } = await start(verified("unverified-exchange"));
    await waitForStatus(id, "completed");
    const attempt = (await attemptOf(id, "charge", 2)).body;
    expect(attempt.verify.response.status).toBe(404);
    expect(attempt.request.method).toBe("POST");
    expect(attempt.response).toMatchObject({ status: 200, body: { text: '{"id":"ch_new"}' } });
  });
});

describe("a worker task's exchange", () => {
  const pool = () => uniqueId("xpool").replace(/-/g, "_");
  const pooled = (name: string) => ({ name, onFailure: "fail", defaults: { timeouts: { heartbeatMs: 10_000, startToCloseMs: 60_000 } }, steps: [{ id: "resize", action: { type: "worker", pool: name, input: { file: "{{ input.file }}" } } }] });

  it("is the input its pool handed out and what the worker reported", async () => {
    const name = pool();
    const { id } = await start(pooled(name), { input: { file: "cat.png" } });
    const [task] = (await api("POST", `/v1/pools/${name}/tasks/poll`, { workerId: "w-1", waitMs: 1_000 })).body.tasks;
    expect((await attemptOf(id, "resize", 1)).body.request).toEqual({ pool: name, body: { text: '{"file":"cat.png"}', bytes: 18 } });

    await api("POST", `/v1/tasks/${task.token}/fail`, { error: { message: "out of memory", retryable: false } });
    await waitForStatus(id, "failed");
    const attempt = (await attemptOf(id, "resize", 1)).body;
    expect(attempt.request.pool).toBe(name);
    expect(JSON.parse(attempt.response.body.text)).toEqual({ error: { message: "out of memory", retryable: false } });
  });

  it("is kept in the row the report writes anyway: the report's commit writes as many rows with it as without", async () => {
    const rowsOfReport = async (exchange: boolean) => {
      const name = pool();
      const { id } = await start(pooled(name), { input: { file: "a.png" } });
      expect((await api("POST", `/v1/pools/${name}/tasks/poll`, { workerId: "w-1", waitMs: 1_000 })).body.tasks).toHaveLength(1);
      const stub = schedulerStub(id);
      const before = (await stub.inspect()) as { storage: { rowsWritten: number } };
      const report = { type: "succeeded" as const, output: { ok: true }, ...(exchange ? { exchange: { response: { body: { text: "x".repeat(4096), bytes: 9000, truncated: true as const } } } } : {}) };
      expect((await stub.report("resize", 1, report)).ok).toBe(true);
      const after = (await stub.inspect()) as { storage: { rowsWritten: number } };
      return after.storage.rowsWritten - before.storage.rowsWritten;
    };
    const without = await rowsOfReport(false);
    expect(without).toBeGreaterThan(0);
    expect(await rowsOfReport(true)).toBe(without);
  });
});

describe("GET /v1/workflows/{id}/steps/{stepId}/attempts/{n}", () => {
  it("answers 404 naming what is missing: the workflow, the step or the attempt", async () => {
    mockRemote(() => json({ ok: true }));
    const { id } = await start(charge(), { input: { amount: 1 } });
    await waitForStatus(id, "completed");
    const missing = uniqueId("missing");
    expect((await attemptOf(missing, "charge", 1)).body.error).toEqual({ code: "not_found", message: `No workflow "${missing}".` });
    expect((await attemptOf(id, "ship", 1)).body.error).toEqual({ code: "not_found", message: `Workflow "${id}" has no step "ship".` });
    const noAttempt = await attemptOf(id, "charge", 5);
    expect(noAttempt.status).toBe(404);
    expect(noAttempt.body.error.message).toBe(`Step "charge" of workflow "${id}" has no attempt 5: its only attempt is 1.`);
  });

  it("answers 400 naming n for what is not an attempt number", async () => {
    for (const n of ["0", "01", "1e0", "abc"]) {
      const { status, body } = await attemptOf("any", "charge", n);
      expect(status, n).toBe(400);
      expect(body.error.details[0].path, n).toEqual(["n"]);
    }
  });

  it("shows an attempt still running with nothing recorded yet", async () => {
    mockRemote(hang);
    const { id } = await start(charge({}, { timeouts: { startToCloseMs: 60_000, heartbeatMs: 30_000 } }), { input: { amount: 1 } });
    await vi.waitFor(async () => expect((await attemptOf(id, "charge", 1)).body.status).toBe("running"), { timeout: 5_000, interval: 20 });
    const attempt = (await attemptOf(id, "charge", 1)).body;
    expect(attempt.request).toBeUndefined();
    expect(attempt.response).toBeUndefined();
    await api("POST", `/v1/workflows/${id}/terminate`, { reason: "test over" });
  });
});
