// The end's notice to a start's `notify` URL, through the real object, its outbox and its alarm: posted once,
// signed so the Standard Webhooks package verifies it, tried again with backoff (time moved, not waited for), and
// recorded in the history. The receiver is a fetch spy of the remote.
import { runInDurableObject } from "cloudflare:test";
import { Webhook } from "standardwebhooks";
import { afterEach, describe, expect, it, vi } from "vitest";
import { NOTICE_TRIES } from "../../src/workflow/delivery-policy";
import type { WorkflowScheduler } from "../../src/workflow/object";
import { api, bearer, getWorkflow, historyOf, uniqueId, waitForStatus } from "../helpers/api";
import { json, mockRemote, type RemoteCall } from "../helpers/remote";
import { objectRecord, schedulerStub } from "../helpers/scheduler";
import { backdate, fireAlarm } from "../helpers/time";

const RECEIVER = "https://notify.example";
const SECRET = `whsec_${btoa("twenty-four bytes of key")}`;

afterEach(() => vi.restoreAllMocks());

/** Waits for "approved": it ends when a test sends that event, or terminates it. */
const approval = { name: "notified", steps: [{ id: "approval", waitForEvent: { event: "approved", timeoutMs: 600_000 } }] };

/** The notify receiver behind fetch, answering its n-th notice as `answer` says. */
function mockReceiver(answer: (n: number) => number = () => 200) {
  const calls: RemoteCall[] = [];
  mockRemote((call) => {
    if (!call.url.startsWith(`${RECEIVER}/`)) return json({ ok: true });
    calls.push(call);
    return json({ received: true }, answer(calls.length));
  });
  return { of: (id: string) => calls.filter((call) => call.url === `${RECEIVER}/${id}`) };
}

async function startNotified(notify: Record<string, unknown> = {}): Promise<string> {
  const id = uniqueId("notified");
  const response = await api("POST", "/v1/workflows", { id, definition: approval, notify: { url: `${RECEIVER}/${id}`, secret: SECRET, ...notify } });
  expect(response.status, JSON.stringify(response.body)).toBe(201);
  return id;
}

async function approve(id: string): Promise<void> {
  const response = await api("POST", `/v1/workflows/${id}/events`, { event: "approved", payload: { by: "ops" } });
  expect(response.status, JSON.stringify(response.body)).toBe(202);
}

/** The object's end-notice rows, read straight from its outbox. */
async function noticeRows(id: string) {
  const { outbox = [] } = await objectRecord(id);
  return outbox.filter((row) => row.kind === "end-notice");
}

/** What the history recorded of the notices, in order. */
async function noticeHistory(id: string) {
  return (await historyOf(id)).filter((event) => event.type.startsWith("workflow_notif")).map((event) => [event.type, event.data]);
}

/** Waits until the receiver's first answer was a failure the object noted: the row waits for its backoff. */
async function firstTryFailed(id: string) {
  return vi.waitFor(
    async () => {
      const rows = await noticeRows(id);
      expect(rows.map((row) => row.attempts)).toEqual([1]);
      return rows[0]!;
    },
    { timeout: 10_000, interval: 20 },
  );
}

/** Checks the signature with the `standardwebhooks` package, as a receiver would. */
function verified(call: RemoteCall, secret = SECRET): unknown {
  return new Webhook(secret).verify(JSON.stringify(call.body), call.headers);
}

describe("a workflow started with notify", () => {
  it("posts its final view once when it ends, signed so the Standard Webhooks package verifies it", async () => {
    const receiver = mockReceiver();
    const id = await startNotified();

    await approve(id);
    await waitForStatus(id, "completed");
    await vi.waitFor(async () => expect(await noticeHistory(id)).toHaveLength(1), { timeout: 10_000, interval: 20 });

    const view = await getWorkflow(id);
    expect(receiver.of(id)).toHaveLength(1);
    const [call] = receiver.of(id);
    expect(verified(call!)).toEqual(call!.body);
    expect(() => verified(call!, `whsec_${btoa("another key of 24 bytes!")}`)).toThrow(/signature/i);
    expect(call!.headers["webhook-id"]).toBe(`${id}:end:0`);
    expect(call!.headers["content-type"]).toBe("application/json");
    expect(call!.body).toEqual({ type: "workflow.completed", timestamp: new Date(view.endedAt).toISOString(), data: view });
    expect(view).toMatchObject({ status: "completed", output: { approval: { by: "ops" } }, notify: { url: `${RECEIVER}/${id}`, signed: true } });
    expect(await noticeHistory(id)).toEqual([["workflow_notified", { noticeId: `${id}:end:0`, status: "completed", attempts: 1, httpStatus: 200 }]]);
    expect(await noticeRows(id)).toEqual([]);
  });

  it("never shows its secret: not in the view, the history, the result or the notice itself", async () => {
    const receiver = mockReceiver();
    const id = await startNotified();
    await api("POST", `/v1/workflows/${id}/terminate`, { reason: "not needed" });
    await vi.waitFor(async () => expect(await noticeHistory(id)).toHaveLength(1), { timeout: 10_000, interval: 20 });

    const shown = JSON.stringify([await getWorkflow(id), await historyOf(id), (await api("GET", `/v1/workflows/${id}/result?waitMs=0`)).body, receiver.of(id)[0]!.body]);

    expect(shown).not.toContain(SECRET.slice("whsec_".length));
    expect(receiver.of(id)[0]!.body).toMatchObject({ type: "workflow.terminated", data: { status: "terminated", error: { message: "not needed" } } });
  });

  it("posts an unsigned notice when it was given no secret", async () => {
    const receiver = mockReceiver();
    const id = uniqueId("unsigned");
    const started = await api("POST", "/v1/workflows", { id, definition: approval, notify: { url: `${RECEIVER}/${id}` } });
    expect(started.body.notify).toEqual({ url: `${RECEIVER}/${id}`, signed: false });

    await approve(id);
    await vi.waitFor(async () => expect(await noticeHistory(id)).toHaveLength(1), { timeout: 10_000, interval: 20 });

    const [call] = receiver.of(id);
    expect(call!.headers).toMatchObject({ "webhook-id": `${id}:end:0`, "webhook-timestamp": expect.any(String) });
    expect(call!.headers["webhook-signature"]).toBeUndefined();
  });

  it("tries a notice the receiver failed again after its backoff, from the alarm, under the same id", async () => {
    const receiver = mockReceiver((n) => (n === 1 ? 503 : 200));
    const id = await startNotified();
    await approve(id);

    const row = await firstTryFailed(id);
    // 5 s, less at most 20 % of jitter: not yet due, so nothing more was posted.
    expect(row.next_attempt_at).toBeGreaterThan(Date.now() + 3_000);
    expect(receiver.of(id)).toHaveLength(1);
    expect(await noticeHistory(id)).toEqual([]);

    // Backdating evicts the object too: the row outlives the instance that wrote it.
    await backdate(id, { ms: 600_000 });
    await fireAlarm(id);

    const calls = receiver.of(id);
    expect(calls).toHaveLength(2);
    expect(calls.map((call) => call.headers["webhook-id"])).toEqual([`${id}:end:0`, `${id}:end:0`]);
    expect(verified(calls[1]!)).toEqual(calls[1]!.body);
    expect(await noticeHistory(id)).toEqual([["workflow_notified", { noticeId: `${id}:end:0`, status: "completed", attempts: 2, httpStatus: 200 }]]);
    expect(await noticeRows(id)).toEqual([]);
  });

  it("posts it once even when the alarm runs twice, at once and again after", async () => {
    const receiver = mockReceiver((n) => (n === 1 ? 503 : 200));
    const id = await startNotified();
    await approve(id);
    await firstTryFailed(id);
    await backdate(id, { ms: 600_000 });

    await runInDurableObject(schedulerStub(id), async (instance: WorkflowScheduler) => {
      await Promise.all([instance.alarm(), instance.alarm()]);
      await instance.alarm();
    });

    expect(receiver.of(id)).toHaveLength(2);
    expect(await noticeHistory(id)).toEqual([["workflow_notified", expect.objectContaining({ attempts: 2 })]]);
  });

  it(`gives a notice up after ${NOTICE_TRIES} failed tries, records why, and leaves no alarm`, async () => {
    const receiver = mockReceiver(() => 503);
    const id = await startNotified();
    await approve(id);
    await firstTryFailed(id);

    for (let tries = 2; tries <= NOTICE_TRIES; tries += 1) {
      await backdate(id, { ms: 600_000 });
      await fireAlarm(id);
    }

    expect(receiver.of(id)).toHaveLength(NOTICE_TRIES);
    expect(await noticeHistory(id)).toEqual([
      ["workflow_notify_failed", { noticeId: `${id}:end:0`, status: "completed", attempts: NOTICE_TRIES, error: "receiver answered 503", httpStatus: 503 }],
    ]);
    const record = await objectRecord(id);
    expect(await noticeRows(id)).toEqual([]);
    expect(record.alarmAt).toBeNull();
  });

  it("sends a second notice, of its new end, when it is redriven and ends again", async () => {
    const receiver = mockReceiver();
    const id = await startNotified();
    await api("POST", `/v1/workflows/${id}/terminate`, {});
    await vi.waitFor(async () => expect(await noticeHistory(id)).toHaveLength(1), { timeout: 10_000, interval: 20 });

    expect((await api("POST", `/v1/workflows/${id}/redrive`, {})).status).toBe(202);
    await approve(id);
    await vi.waitFor(async () => expect(await noticeHistory(id)).toHaveLength(2), { timeout: 10_000, interval: 20 });

    expect(receiver.of(id).map((call) => [call.headers["webhook-id"], call.body.type, call.body.data.redriveCount])).toEqual([
      [`${id}:end:0`, "workflow.terminated", 0],
      [`${id}:end:1`, "workflow.completed", 1],
    ]);
    expect((await noticeHistory(id)).map(([type, data]) => [type, data.noticeId])).toEqual([
      ["workflow_notified", `${id}:end:0`],
      ["workflow_notified", `${id}:end:1`],
    ]);
  });
});

describe("a start's notify that cannot be used", () => {
  const refusals: [string, "default" | "gamma", Record<string, unknown>, (string | number)[]][] = [
    ["a URL that is not https", "default", { url: "ftp://notify.example/x" }, ["notify", "url"]],
    ["a host outside the tenant's ALLOWED_TARGETS", "gamma", { url: "https://elsewhere.example/x" }, ["notify", "url"]],
    ["a URL that is no URL", "default", { url: "notify me" }, ["notify", "url"]],
    ["a secret that is not whsec_ and base64", "default", { url: `${RECEIVER}/x`, secret: "whsec_short" }, ["notify", "secret"]],
    ["a field the contract does not know", "default", { url: `${RECEIVER}/x`, headers: { "X-Key": "1" } }, ["notify"]],
  ];

  it.each(refusals)("is refused with 400 naming it (%s), and nothing starts", async (_name, tenant, notify, path) => {
    const id = uniqueId("refused");
    const response = await api("POST", "/v1/workflows", { id, definition: approval, notify }, { headers: bearer(tenant) });

    expect(response.status, JSON.stringify(response.body)).toBe(400);
    expect(response.body.error.code).toBe("validation_failed");
    expect(response.body.error.details.map((issue: { path: unknown }) => issue.path)).toContainEqual(path);
    expect((await api("GET", `/v1/workflows/${id}`, undefined, { headers: bearer(tenant) })).status).toBe(404);
  });
});
