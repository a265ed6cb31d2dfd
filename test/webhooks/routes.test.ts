import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { api, bearer, uniqueId } from "../helpers/api";
import { deliveriesOf, getWebhook, listWebhooks, putWebhook, RECEIVER } from "../helpers/webhooks";

const SECRET = `whsec_${btoa("0123456789abcdef01234567")}`;
const body = (id: string, extra: Record<string, unknown> = {}) => ({ url: `${RECEIVER}/${id}`, events: ["workflow.*", "step.timed_out"], ...extra });

/** The field paths a 400 names. */
const pathsOf = (response: { body: any }): unknown[] => response.body.error.details.map((issue: { path: unknown[] }) => issue.path);

/** The secret D1 holds for a webhook (never shown by a read). */
async function storedSecret(id: string, tenant = "default"): Promise<string | undefined> {
  const row = await env.DB.prepare("SELECT secret FROM webhooks WHERE tenant = ? AND id = ?").bind(tenant, id).first<{ secret: string }>();
  return row?.secret;
}

describe("PUT /v1/webhooks/{id}", () => {
  it("creates a webhook with 201 and shows the secret it made, once: Standard Webhooks format, 24 random bytes", async () => {
    const id = uniqueId("hook");

    const created = await putWebhook(id, body(id));

    expect(created.status).toBe(201);
    expect(created.body).toEqual({ id, url: `${RECEIVER}/${id}`, events: ["workflow.*", "step.timed_out"], createdAt: expect.any(Number), updatedAt: expect.any(Number), secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{32}$/) });
    expect(atob(created.body.secret.slice("whsec_".length))).toHaveLength(24);
    expect(await storedSecret(id)).toBe(created.body.secret);
    const read = await getWebhook(id);
    expect(read.status).toBe(200);
    expect(read.body).not.toHaveProperty("secret");
    expect((await listWebhooks()).find((hook) => hook.id === id)).toEqual({ ...read.body });
  });

  it("replaces a webhook with 200, keeping its secret and showing none", async () => {
    const id = uniqueId("hook");
    const created = await putWebhook(id, body(id));

    const replaced = await putWebhook(id, body(id, { url: `${RECEIVER}/${id}/v2`, events: ["*"] }));

    expect(replaced.status).toBe(200);
    expect(replaced.body).toEqual({ id, url: `${RECEIVER}/${id}/v2`, events: ["*"], createdAt: created.body.createdAt, updatedAt: expect.any(Number) });
    expect(await storedSecret(id)).toBe(created.body.secret);
  });

  it("takes a secret it is given, and does not echo it", async () => {
    const id = uniqueId("hook");
    const created = await putWebhook(id, body(id, { secret: SECRET }));
    const other = `whsec_${btoa("another key of 24 bytes!")}`;
    const replaced = await putWebhook(id, body(id, { secret: other }));

    expect(created.status).toBe(201);
    expect(created.body).not.toHaveProperty("secret");
    expect(replaced.status).toBe(200);
    expect(replaced.body).not.toHaveProperty("secret");
    expect(await storedSecret(id)).toBe(other);
  });

  it.each<[string, Record<string, unknown>, unknown[]]>([
    ["a URL that is not absolute", { url: "/hooks" }, ["url"]],
    ["a URL with credentials", { url: "https://user:pw@hooks.example/x" }, ["url"]],
    ["a URL that is not https or http", { url: "ftp://hooks.example/x" }, ["url"]],
    ["an event that does not exist", { events: ["workflow.*", "workflow.finished"] }, ["events", 1]],
    ["a prefix no event has", { events: ["job.*"] }, ["events", 0]],
    ["a filter of the wrong form", { events: ["workflow"] }, ["events", 0]],
    ["no events", { events: [] }, ["events"]],
    ["a secret without the whsec_ prefix", { secret: btoa("0123456789abcdef01234567") }, ["secret"]],
    ["a secret with a key under 24 bytes", { secret: `whsec_${btoa("too short a key")}` }, ["secret"]],
    ["a secret that is not base64", { secret: "whsec_not base64 at all, not at all, no" }, ["secret"]],
    ["a secret with a key over 64 bytes", { secret: `whsec_${btoa("k".repeat(66))}` }, ["secret"]],
    ["an unknown field", { filter: "x" }, []],
  ])("refuses %s with 400 naming it, and stores nothing", async (_what, change, path) => {
    const id = uniqueId("hook");
    const existing = uniqueId("hook");
    await putWebhook(existing, body(existing));
    const before = await getWebhook(existing);

    const refused = await putWebhook(id, body(id, change));
    const refusedReplace = await putWebhook(existing, body(existing, change));

    for (const response of [refused, refusedReplace]) {
      expect(response.status, JSON.stringify(response.body)).toBe(400);
      expect(response.body.error.code).toBe("validation_failed");
      expect(pathsOf(response)).toContainEqual(path);
    }
    expect((await getWebhook(id)).status).toBe(404);
    expect(await getWebhook(existing)).toEqual(before);
  });

  it("names the filter that matches no event in the message", async () => {
    const id = uniqueId("hook");
    const response = await putWebhook(id, body(id, { events: ["step.finished"] }));

    expect(response.body.error.message).toMatch(/events\.0: "step\.finished" matches no event/);
  });

  it("refuses a URL the tenant's ALLOWED_TARGETS does not list, as an action's target would be", async () => {
    const id = uniqueId("hook");

    const refused = await putWebhook(id, body(id), "gamma");
    const allowed = await putWebhook(id, { ...body(id), url: "https://hooks.allowed.example/in" }, "gamma");

    expect(refused.status).toBe(400);
    expect(pathsOf(refused)).toContainEqual(["url"]);
    expect(refused.body.error.message).toMatch(/not in this tenant's ALLOWED_TARGETS/);
    expect(allowed.status, JSON.stringify(allowed.body)).toBe(201);
  });

  it("keeps at most 20 webhooks per tenant: the 21st is a 409, replacing one of the 20 still works", async () => {
    const ids = Array.from({ length: 20 }, () => uniqueId("hook"));
    for (const id of ids) expect((await putWebhook(id, body(id), "lister")).status).toBe(201);

    const extra = uniqueId("hook");
    const refused = await putWebhook(extra, body(extra), "lister");
    const replaced = await putWebhook(ids[0]!, body(ids[0]!, { events: ["*"] }), "lister");

    expect(refused.status).toBe(409);
    expect(refused.body.error).toMatchObject({ code: "conflict", message: expect.stringMatching(/20 webhooks/) });
    expect(replaced.status).toBe(200);
    expect(await listWebhooks("lister")).toHaveLength(20);
  });
});

describe("DELETE /v1/webhooks/{id}", () => {
  it("deletes a webhook with 200, as a schedule's delete answers, and then it is gone", async () => {
    const id = uniqueId("hook");
    await putWebhook(id, body(id));

    const deleted = await api("DELETE", `/v1/webhooks/${id}`);
    const again = await api("DELETE", `/v1/webhooks/${id}`);

    expect(deleted).toEqual({ status: 200, body: { id, deleted: true } });
    expect(again.status).toBe(404);
    expect(again.body.error.code).toBe("not_found");
    expect((await getWebhook(id)).status).toBe(404);
    expect((await api("GET", `/v1/webhooks/${id}/deliveries`)).status).toBe(404);
    expect((await listWebhooks()).map((hook) => hook.id)).not.toContain(id);
  });

  it("forgets the deliveries, so a webhook made again under the id starts with none", async () => {
    const id = uniqueId("hook");
    await putWebhook(id, body(id));
    await insertDeliveries("default", id, 1);
    expect(await deliveriesOf(id)).toHaveLength(1);

    await api("DELETE", `/v1/webhooks/${id}`);
    await putWebhook(id, body(id));

    expect(await deliveriesOf(id)).toEqual([]);
  });
});

/** Delivery rows written straight into D1, one per event, the later ones first made later. */
async function insertDeliveries(tenant: string, webhookId: string, count: number) {
  const statement = env.DB.prepare(
    `INSERT INTO webhook_deliveries (tenant, webhook_id, event_id, workflow_id, event_type, status, attempts, last_status, last_error, first_at, last_at)
     VALUES (?, ?, ?, 'wf', 'workflow.started', 'delivered', 1, 200, NULL, ?, ?)`,
  );
  const base = Date.now() - count * 1_000;
  await env.DB.batch(Array.from({ length: count }, (_, i) => statement.bind(tenant, webhookId, `wf:${i + 1}`, base + i * 1_000, base + i * 1_000)));
}

describe("GET /v1/webhooks/{id}/deliveries", () => {
  it("answers an empty list for a webhook that has delivered nothing, and 404 for no webhook", async () => {
    const id = uniqueId("hook");
    await putWebhook(id, body(id));

    expect(await deliveriesOf(id)).toEqual([]);
    expect((await api("GET", `/v1/webhooks/${uniqueId("none")}/deliveries`)).status).toBe(404);
  });

  it("lists the 100 most recent deliveries, newest first", async () => {
    const id = uniqueId("hook");
    await putWebhook(id, body(id));
    await insertDeliveries("default", id, 120);

    const deliveries = await deliveriesOf(id);

    expect(deliveries).toHaveLength(100);
    expect(deliveries[0]).toEqual({ eventId: "wf:120", type: "workflow.started", workflowId: "wf", status: "delivered", attempts: 1, lastStatus: 200, firstAt: expect.any(Number), lastAt: expect.any(Number) });
    expect(deliveries.map((delivery) => delivery.eventId)).toEqual(Array.from({ length: 100 }, (_, i) => `wf:${120 - i}`));
  });
});

describe("a webhook of another tenant", () => {
  it("is a 404 for every route that names it, is not listed, and stays as its owner made it", async () => {
    const id = uniqueId("hook");
    await putWebhook(id, body(id), "alpha");
    await insertDeliveries("alpha", id, 2);
    const before = await getWebhook(id, "alpha");
    const as = { headers: bearer("beta") };

    for (const [method, path] of [["GET", `/v1/webhooks/${id}`], ["GET", `/v1/webhooks/${id}/deliveries`], ["DELETE", `/v1/webhooks/${id}`]] as const) {
      const response = await api(method, path, undefined, as);
      expect(response.status, `${method} ${path}`).toBe(404);
      expect(response.body.error.code).toBe("not_found");
    }
    expect((await listWebhooks("beta")).map((hook) => hook.id)).not.toContain(id);
    expect(await getWebhook(id, "alpha")).toEqual(before);
    expect(await deliveriesOf(id, "alpha")).toHaveLength(2);
  });

  it("does not stop the other tenant from making its own under the same id, which leaves the first alone", async () => {
    const id = uniqueId("hook");
    const first = await putWebhook(id, body(id), "alpha");

    const own = await putWebhook(id, body(id, { events: ["*"] }), "beta");

    expect(own.status).toBe(201);
    expect(own.body.secret).not.toBe(first.body.secret);
    expect((await getWebhook(id, "alpha")).body.events).toEqual(["workflow.*", "step.timed_out"]);
    expect(await storedSecret(id, "alpha")).toBe(first.body.secret);
  });
});
