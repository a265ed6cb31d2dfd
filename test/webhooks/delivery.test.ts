import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { backoffMs } from "../../src/domain/machine/backoff";
import { deliverEvents } from "../../src/webhooks/deliver-events";
import { SEND_RETRY } from "../../src/workflow/delivery-policy";
import { api, historyOf, start, waitForStatus } from "../helpers/api";
import { schedulerStub } from "../helpers/scheduler";
import { FAST } from "../helpers/policies";
import { REMOTE } from "../helpers/remote";
import { backdate, fireAlarm } from "../helpers/time";
import { cursorRow, deliveriesOf, listWebhooks, mockReceivers, subscribe, verified } from "../helpers/webhooks";

// A webhook hears of every workflow of its tenant: each test's webhooks go with it, so the next test's workflows
// are announced only to its own.
afterEach(async () => {
  vi.restoreAllMocks();
  for (const hook of await listWebhooks()) await api("DELETE", `/v1/webhooks/${hook.id}`);
});

const twoSteps = {
  name: "announced",
  defaults: FAST,
  steps: [
    { id: "reserve", action: { type: "http", url: `${REMOTE}/reserve` } },
    { id: "charge", dependsOn: ["reserve"], action: { type: "http", url: `${REMOTE}/charge` } },
  ],
};

/** Waits until the workflow's object holds no cursor row any more: everything it had to announce was delivered. */
async function waitUntilAnnounced(workflowId: string) {
  await vi.waitFor(async () => expect(await cursorRow(workflowId)).toBeUndefined(), { timeout: 10_000, interval: 20 });
}

/** Waits until the consumer's report of a failure reached the object: the row backs off, nothing in flight. */
async function waitForFailure(workflowId: string) {
  await vi.waitFor(
    async () => expect(await cursorRow(workflowId)).toMatchObject({ inFlight: false, attempts: expect.any(Number) }),
    { timeout: 10_000, interval: 20 },
  );
  expect((await cursorRow(workflowId))!.attempts).toBeGreaterThan(0);
}

/**
 * A minute passes for the workflow and its alarm runs: a backoff (at most a minute) is over, so the object sends
 * again. The real alarm may have beaten the test to it (the first backoffs are a second or two): then this finds
 * the message in flight and does nothing.
 */
async function retryNow(workflowId: string) {
  await backdate(workflowId, { ms: 60_000 });
  await fireAlarm(workflowId);
}

/** What a receiver's tries came to, in order, each run of the same outcome once: "workflow.started failed". */
function outcomes(entries: { type: string; answered: number | "threw" }[]): string[] {
  const all = entries.map((entry) => `${entry.type} ${entry.answered === 200 ? "ok" : "failed"}`);
  return all.filter((outcome, index) => outcome !== all[index - 1]);
}

describe("delivering a workflow's events", () => {
  it("posts each matching event once, in history order, signed so the Standard Webhooks package verifies it; others not", async () => {
    const receivers = mockReceivers();
    const hook = await subscribe(["workflow.*", "step.succeeded"]);
    const { id } = await start(twoSteps);
    await waitForStatus(id, "completed");
    await waitUntilAnnounced(id);

    const got = receivers.of(hook.id, id);
    expect(got.map((entry) => [entry.type, entry.body.data.stepId])).toEqual([
      ["workflow.started", undefined],
      ["step.succeeded", "reserve"],
      ["step.succeeded", "charge"],
      ["workflow.completed", undefined],
    ]);
    const seqs = got.map((entry) => entry.seq);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    for (const entry of got) {
      expect(verified(entry, hook.secret)).toEqual(entry.body);
      expect(entry.eventId).toBe(`${id}:${entry.seq}`);
      expect(entry.headers["content-type"]).toBe("application/json");
      expect(Number(entry.headers["webhook-timestamp"])).toBeCloseTo(Date.now() / 1000, -2);
    }
    expect(got[0]!.body).toEqual({
      type: "workflow.started",
      timestamp: new Date(got[0]!.body.data.at).toISOString(),
      data: { workflowId: id, workflowName: "announced", seq: 1, at: expect.any(Number), data: { name: "announced", definition: expect.any(Object) } },
    });
    expect(got[1]!.body.data).toMatchObject({ stepId: "reserve", attempt: 1 });
    const deliveries = await deliveriesOf(hook.id);
    expect(deliveries.filter((delivery) => delivery.workflowId === id).map((delivery) => [delivery.type, delivery.status, delivery.attempts, delivery.lastStatus]).reverse()).toEqual([
      ["workflow.started", "delivered", 1, 200],
      ["step.succeeded", "delivered", 1, 200],
      ["step.succeeded", "delivered", 1, 200],
      ["workflow.completed", "delivered", 1, 200],
    ]);
  });

  it("refuses a forged or altered delivery when the receiver verifies it", async () => {
    const receivers = mockReceivers();
    const hook = await subscribe(["workflow.completed"]);
    const { id } = await start(twoSteps);
    await waitForStatus(id, "completed");
    await waitUntilAnnounced(id);
    const [entry] = receivers.of(hook.id, id);

    const altered = { ...entry!, body: { ...entry!.body, type: "workflow.failed" } };
    const otherSecret = (await subscribe(["*"])).secret;

    expect(() => verified(altered, hook.secret)).toThrow(/signature/i);
    expect(() => verified(entry!, otherSecret)).toThrow(/signature/i);
  });

  it("posts each event to every webhook it matches, and none to a webhook it does not", async () => {
    const receivers = mockReceivers();
    const all = await subscribe(["*"]);
    const steps = await subscribe(["step.*"]);
    const none = await subscribe(["step.timed_out"]);
    const { id } = await start(twoSteps);
    await waitForStatus(id, "completed");
    await waitUntilAnnounced(id);

    const types = (hookId: string) => receivers.of(hookId, id).map((entry) => entry.type);
    expect(types(all.id)).toEqual(["workflow.started", "step.scheduled", "step.started", "step.succeeded", "step.scheduled", "step.started", "step.succeeded", "workflow.completed"]);
    expect(types(steps.id)).toEqual(types(all.id).filter((type) => type.startsWith("step.")));
    expect(types(none.id)).toEqual([]);
    expect(new Set(receivers.of(all.id, id).map((entry) => entry.eventId)).size).toBe(8);
  });
});

describe("a message delivered twice", () => {
  it("posts nothing twice: what D1 records as delivered is skipped, and the report says how far it went", async () => {
    const receivers = mockReceivers();
    const hook = await subscribe(["workflow.*"]);
    const { id } = await start(twoSteps);
    await waitForStatus(id, "completed");
    await waitUntilAnnounced(id);
    const posted = receivers.of(hook.id, id).length;
    const last = (await historyOf(id)).at(-1)!.seq;

    const report = await deliverEvents(env, { tenant: "default", workflowId: id, workflowName: "announced", afterSeq: 0 });

    expect(report).toEqual({ afterSeq: 0, throughSeq: last, outcome: "delivered" });
    expect(receivers.of(hook.id, id)).toHaveLength(posted);
    // Its report is stale for the object, whose cursor row is gone: nothing changes there either.
    expect(await schedulerStub(id).reportWebhooks(report)).toEqual({ ok: true, applied: false });
    expect(await cursorRow(id)).toBeUndefined();
  });
});

describe("a receiver that is down", () => {
  it("shows about when a failing delivery is tried next: the workflow's own retry time, give or take its jitter; none once delivered", async () => {
    let down = true;
    mockReceivers((webhookId) => (down && webhookId === hook.id ? 503 : 200));
    const hook = await subscribe(["workflow.started"]);
    const { id } = await start(twoSteps);
    await waitForStatus(id, "completed");

    for (let round = 0; round < 3; round++) {
      await waitForFailure(id);
      // Read between two looks at the object's row: the real alarm may try again meanwhile, and then this looks again.
      const { delivery, row } = await vi.waitFor(async () => {
        const before = await cursorRow(id);
        const [delivery] = (await deliveriesOf(hook.id)).filter((entry) => entry.workflowId === id);
        expect(await cursorRow(id)).toEqual(before);
        expect(before).toMatchObject({ inFlight: false, attempts: delivery.attempts });
        return { delivery, row: before! };
      });
      expect(delivery).toMatchObject({ status: "failing", lastStatus: 503 });
      const nominal = backoffMs(delivery.attempts - 1, SEND_RETRY, () => 0.5);
      expect(delivery.nextAttemptAt - delivery.lastAt).toBe(nominal);
      // The object backs off from when the report reached it, a moment after the post: that moment, and the jitter.
      expect(Math.abs(row.nextAttemptAt - delivery.nextAttemptAt)).toBeLessThanOrEqual(nominal * SEND_RETRY.jitter + 500);
      await retryNow(id);
      await vi.waitFor(async () => expect((await deliveriesOf(hook.id))[0].attempts).toBeGreaterThan(delivery.attempts));
    }

    down = false;
    await retryNow(id);
    await waitUntilAnnounced(id);
    const [delivered] = (await deliveriesOf(hook.id)).filter((entry) => entry.workflowId === id);
    expect(delivered.status).toBe("delivered");
    expect(delivered).not.toHaveProperty("nextAttemptAt");
  });

  it("loses nothing: its events are retried with backoff through the object's alarm and arrive in order once it is back", async () => {
    let down = true;
    let failures = 0;
    const receivers = mockReceivers((webhookId) => {
      if (webhookId !== hook.id || !down) return 200;
      failures += 1;
      return failures % 2 === 0 ? "throw" : 503;
    });
    const hook = await subscribe(["workflow.*"]);
    const { id } = await start(twoSteps);
    await waitForStatus(id, "completed");

    // A minute down: the first try and at least three of the alarm's, 1 s to 60 s apart, fail (503, or no answer).
    for (let round = 0; round < 3; round++) {
      await waitForFailure(id);
      const tried = receivers.of(hook.id, id).length;
      await retryNow(id);
      await vi.waitFor(() => expect(receivers.of(hook.id, id).length).toBeGreaterThan(tried));
    }
    await waitForFailure(id);
    expect(failures).toBeGreaterThanOrEqual(4);
    expect(outcomes(receivers.of(hook.id, id))).toEqual(["workflow.started failed"]);
    expect(await cursorRow(id)).toMatchObject({ afterSeq: 0 });

    down = false;
    await retryNow(id);
    await waitUntilAnnounced(id);

    const got = receivers.of(hook.id, id);
    expect(outcomes(got)).toEqual(["workflow.started failed", "workflow.started ok", "workflow.completed ok"]);
    for (const entry of got) expect(verified(entry, hook.secret)).toEqual(entry.body);
    const deliveries = (await deliveriesOf(hook.id)).filter((delivery) => delivery.workflowId === id);
    expect(deliveries.map((delivery) => [delivery.type, delivery.status, delivery.attempts, delivery.lastStatus])).toEqual([
      ["workflow.completed", "delivered", 1, 200],
      ["workflow.started", "delivered", failures + 1, 200],
    ]);
  });

  it("holds back only its own webhook: another one gets every event by the next retry at the latest, and none of them twice", async () => {
    let down = true;
    const receivers = mockReceivers((webhookId) => (down && webhookId === failing.id ? 503 : 200));
    const failing = await subscribe(["workflow.*"]);
    const healthy = await subscribe(["workflow.*"]);
    const { id } = await start(twoSteps);
    await waitForStatus(id, "completed");
    // The cursor is the workflow's: events after the failing one wait for its next try, which the healthy one gets.
    await waitForFailure(id);
    await retryNow(id);
    await vi.waitFor(() => expect(receivers.of(healthy.id, id)).toHaveLength(2));
    await waitForFailure(id);

    down = false;
    await retryNow(id);
    await waitUntilAnnounced(id);

    expect(receivers.of(healthy.id, id).map((entry) => [entry.type, entry.answered])).toEqual([
      ["workflow.started", 200],
      ["workflow.completed", 200],
    ]);
    expect(outcomes(receivers.of(failing.id, id))).toEqual(["workflow.started failed", "workflow.started ok", "workflow.completed ok"]);
    expect(receivers.of(failing.id, id).filter((entry) => entry.answered === 200)).toHaveLength(2);
  });

  it("is given up on an event after a day of failures (failed), and the events after it go on", async () => {
    let down = true;
    const receivers = mockReceivers((webhookId) => (down && webhookId === hook.id ? 503 : 200));
    const hook = await subscribe(["workflow.*"]);
    const { id } = await start(twoSteps);
    await waitForStatus(id, "completed");
    await waitForFailure(id);
    // The first failure was a day and a minute ago.
    await env.DB.prepare("UPDATE webhook_deliveries SET first_at = first_at - ? WHERE tenant = 'default' AND webhook_id = ?").bind(24 * 3_600_000 + 60_000, hook.id).run();

    await retryNow(id);
    await vi.waitFor(() => expect(receivers.of(hook.id, id).map((entry) => entry.type)).toContain("workflow.completed"));
    await waitForFailure(id);
    down = false;
    await retryNow(id);
    await waitUntilAnnounced(id);

    expect(outcomes(receivers.of(hook.id, id))).toEqual(["workflow.started failed", "workflow.completed failed", "workflow.completed ok"]);
    const deliveries = (await deliveriesOf(hook.id)).filter((delivery) => delivery.workflowId === id);
    expect(deliveries.map((delivery) => [delivery.type, delivery.status])).toEqual([
      ["workflow.completed", "delivered"],
      ["workflow.started", "failed"],
    ]);
  });
  it("that has failed for a day has each event given up at its first failure, and is trusted again once it answers", async () => {
    let down = true;
    const receivers = mockReceivers((webhookId) => (down && webhookId === hook.id ? 503 : 200));
    const hook = await subscribe(["workflow.*"]);
    const failingSince = () => env.DB.prepare("SELECT failing_since FROM webhooks WHERE id = ?").bind(hook.id).first<number | null>("failing_since");
    const { id } = await start(twoSteps);
    await waitForStatus(id, "completed");
    await waitForFailure(id);
    expect(await failingSince()).toEqual(expect.any(Number));
    // Every try has failed since a day and a minute ago.
    await env.DB.prepare("UPDATE webhooks SET failing_since = failing_since - ? WHERE id = ?").bind(24 * 3_600_000 + 60_000, hook.id).run();

    await retryNow(id);
    await waitUntilAnnounced(id);

    expect(outcomes(receivers.of(hook.id, id))).toEqual(["workflow.started failed", "workflow.completed failed"]);
    expect(receivers.of(hook.id, id).filter((entry) => entry.type === "workflow.completed")).toHaveLength(1);
    const given = (await deliveriesOf(hook.id)).filter((delivery) => delivery.workflowId === id);
    expect(given.map((delivery) => [delivery.type, delivery.status, delivery.lastStatus])).toEqual([
      ["workflow.completed", "failed", 503],
      ["workflow.started", "failed", 503],
    ]);

    down = false;
    const next = await start(twoSteps);
    await waitForStatus(next.id, "completed");
    await waitUntilAnnounced(next.id);
    expect(outcomes(receivers.of(hook.id, next.id))).toEqual(["workflow.started ok", "workflow.completed ok"]);
    expect(await failingSince()).toBeNull();
  });
});

describe("the target of a webhook", () => {
  it("is checked again at delivery: a URL the tenant's targets refuse now is given up at once, not posted", async () => {
    const receivers = mockReceivers();
    const hook = await subscribe(["workflow.*"]);
    const { id } = await start(twoSteps);
    await waitForStatus(id, "completed");
    await waitUntilAnnounced(id);
    const posted = receivers.received.length;

    // The same message again, with the tenant now limited to other hosts.
    const limited = { ...env, ALLOWED_TARGETS: JSON.stringify({ default: ["elsewhere.example"] }) };
    await env.DB.prepare("DELETE FROM webhook_deliveries WHERE tenant = 'default' AND webhook_id = ?").bind(hook.id).run();
    const report = await deliverEvents(limited, { tenant: "default", workflowId: id, workflowName: "announced", afterSeq: 0 });

    expect(report).toMatchObject({ afterSeq: 0, outcome: "delivered" });
    expect(receivers.received.length).toBe(posted);
    const deliveries = await deliveriesOf(hook.id);
    expect(deliveries.map((delivery) => [delivery.type, delivery.status])).toEqual([
      ["workflow.completed", "failed"],
      ["workflow.started", "failed"],
    ]);
    expect(deliveries[0].lastError).toMatch(/target refused: host hooks\.example is not in this tenant's ALLOWED_TARGETS/);
  });
});
