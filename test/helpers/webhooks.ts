// Webhooks as the tests see them: the routes, a receiver behind the fake remote that checks every signature with
// the Standard Webhooks package, the messages objects send to the webhook queue, and an object's cursor row.
import { env } from "cloudflare:workers";
import { Webhook } from "standardwebhooks";
import { expect, vi } from "vitest";
import { api, bearer, uniqueId, type ApiResponse, type TestTenant } from "./api";
import { json, mockRemote, type RemoteCall } from "./remote";
import { objectRecord } from "./scheduler";

/** Where the tests' receivers listen: `RECEIVER/<webhook id>`. */
export const RECEIVER = "https://hooks.example";

export function putWebhook(id: string, body: unknown, tenant: TestTenant = "default"): Promise<ApiResponse> {
  return api("PUT", `/v1/webhooks/${id}`, body, { headers: bearer(tenant) });
}

export function getWebhook(id: string, tenant: TestTenant = "default"): Promise<ApiResponse> {
  return api("GET", `/v1/webhooks/${id}`, undefined, { headers: bearer(tenant) });
}

export async function listWebhooks(tenant: TestTenant = "default"): Promise<{ id: string }[]> {
  const response = await api("GET", "/v1/webhooks", undefined, { headers: bearer(tenant) });
  expect(response.status).toBe(200);
  return response.body.webhooks;
}

export async function deliveriesOf(id: string, tenant: TestTenant = "default"): Promise<any[]> {
  const response = await api("GET", `/v1/webhooks/${id}/deliveries`, undefined, { headers: bearer(tenant) });
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return response.body.deliveries;
}

/** A new webhook of `tenant` at `RECEIVER/<its id>`, with the secret the service made for it. */
export async function subscribe(events: string[], tenant: TestTenant = "default") {
  const id = uniqueId("hook");
  const response = await putWebhook(id, { url: `${RECEIVER}/${id}`, events }, tenant);
  expect(response.status, JSON.stringify(response.body)).toBe(201);
  return { id, secret: response.body.secret as string };
}

/** What a receiver got: the event and whether the package's own `Webhook.verify` accepted its signature. */
export interface Received {
  webhookId: string;
  eventId: string;
  type: string;
  seq: number;
  workflowId: string;
  body: any;
  headers: Record<string, string>;
  answered: number | "threw";
}

/**
 * The fake remote, with receivers at RECEIVER/<webhook id> answering as `receiver` says (a status, or "throw" for a
 * network error) and every other URL (the workflows' own steps) answering 200.
 */
export function mockReceivers(receiver: (webhookId: string, call: RemoteCall) => number | "throw" = () => 200) {
  const received: Received[] = [];
  const remote = mockRemote((call) => {
    if (!call.url.startsWith(`${RECEIVER}/`)) return json({ ok: true });
    const webhookId = call.url.slice(RECEIVER.length + 1);
    const answer = receiver(webhookId, call);
    const { type, data } = call.body;
    received.push({ webhookId, eventId: call.headers["webhook-id"]!, type, seq: data.seq, workflowId: data.workflowId, body: call.body, headers: call.headers, answered: answer === "throw" ? "threw" : answer });
    if (answer === "throw") throw new TypeError("Network connection lost.");
    return json({ received: true }, answer);
  });
  return {
    remote,
    received,
    /** What `webhookId` got for one workflow, in the order it got it. */
    of: (webhookId: string, workflowId: string) => received.filter((entry) => entry.webhookId === webhookId && entry.workflowId === workflowId),
  };
}

/**
 * Checks the signature with the `standardwebhooks` package, as a receiver would. The body was made by
 * JSON.stringify, so stringifying the parsed body gives back the bytes that were signed.
 */
export function verified(entry: Received, secret: string): unknown {
  return new Webhook(secret).verify(JSON.stringify(entry.body), entry.headers);
}

/** Records every message an object sends to the webhook queue and passes it on. One watch per test. */
export function watchWebhookSends() {
  const queue = env.WEBHOOKS;
  const send = queue.send.bind(queue);
  const sent: { tenant: string; workflowId: string; afterSeq: number }[] = [];
  const spy = vi.spyOn(queue, "send").mockImplementation(async (body, options) => {
    sent.push(body as (typeof sent)[number]);
    return send(body, options);
  });
  return { spy, sent, of: (workflowId: string) => sent.filter((message) => message.workflowId === workflowId) };
}

/** The object's webhook cursor row, read straight from its outbox; undefined when there is none. */
export async function cursorRow(workflowId: string, tenant: TestTenant = "default") {
  const { outbox = [] } = await objectRecord(workflowId, tenant);
  const rows = outbox.filter((row) => row.kind === "webhooks");
  expect(rows.length).toBeLessThanOrEqual(1);
  const row = rows[0];
  if (!row) return undefined;
  const payload = JSON.parse(row.payload_json) as { afterSeq: number; inFlight: boolean };
  return { ...payload, attempts: row.attempts, nextAttemptAt: row.next_attempt_at };
}
