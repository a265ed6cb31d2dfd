// Reliability case 32: a start message delivered twice, or poisonous. The STARTS queue delivers at least once, so a
// message comes again (its ack lost, the consumer gone mid-batch) and a producer may send the same start twice: one
// workflow per id. A message that can never start is recorded with its error where an operator sees it, and acked,
// never retried forever; one refused for now is retried later, never a dead letter.
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { api, bearer, historyOf, TOKENS, uniqueId } from "../helpers/api";
import { watchDeliveries } from "../helpers/queue";
import { deadLetterOf, deadLettersOf, deadLettersWithSettings, deliverStarts, queueLagOf, waitingDefinition } from "../helpers/starts";

afterEach(async () => {
  vi.restoreAllMocks();
  await queueLagOf(0);
});

/** The tenant's workflows of this definition name, from the index (which follows each start closely). */
async function workflowsNamed(name: string, tenant: "default" | "alpha" = "default"): Promise<string[]> {
  const page = await api("GET", `/v1/workflows?name=${name}`, undefined, { headers: bearer(tenant) });
  return page.body.workflows.map((workflow: { id: string }) => workflow.id);
}

describe("case 32: a start message delivered twice", () => {
  it("starts one workflow when the queue delivers the same message again (its ack lost), with or without an id", async () => {
    const name = uniqueId("twice");
    const withId = { tenant: "default", start: { id: uniqueId("queued"), definition: waitingDefinition(name) } };
    const withoutId = { tenant: "default", start: { definition: waitingDefinition(name), input: { n: 2 } } };

    const first = await deliverStarts([{ id: "m-twice-a", body: withId }, { id: "m-twice-b", body: withoutId }]);
    const again = await deliverStarts([{ id: "m-twice-a", body: withId, attempts: 2 }, { id: "m-twice-b", body: withoutId, attempts: 2 }]);

    expect(first.explicitAcks.sort()).toEqual(["m-twice-a", "m-twice-b"]);
    expect(again.explicitAcks.sort()).toEqual(["m-twice-a", "m-twice-b"]);
    expect(again.retryMessages).toEqual([]);
    // Without an id, the workflow's is made from the message's, which the queue keeps across deliveries.
    await vi.waitFor(async () => expect((await workflowsNamed(name)).sort()).toEqual([withId.start.id, "msg_m-twice-b"].sort()));
    for (const id of [withId.start.id, "msg_m-twice-b"]) {
      expect((await historyOf(id)).filter((event) => event.type === "workflow_started")).toHaveLength(1);
    }
    expect(await deadLetterOf("m-twice-a")).toBeUndefined();
  });

  it("starts one workflow when a producer sends the same start twice through the real queue", async () => {
    const deliveries = watchDeliveries();
    const name = uniqueId("sent-twice");
    const message = { tenant: "alpha", start: { id: uniqueId("queued"), definition: waitingDefinition(name), input: { order: 7 } } };

    await env.STARTS.send(message);
    await env.STARTS.send(message);

    const answered = () => deliveries.deliveries.filter((delivery) => delivery.queue === "shepherd-starts" && delivery.answer !== undefined);
    await vi.waitFor(() => expect(answered().map((delivery) => delivery.answer)).toEqual(["ack", "ack"]), { timeout: 10_000, interval: 50 });
    await vi.waitFor(async () => expect(await workflowsNamed(name, "alpha")).toEqual([message.start.id]));
    const workflow = await api("GET", `/v1/workflows/${message.start.id}`, undefined, { headers: bearer("alpha") });
    expect(workflow.body).toMatchObject({ id: message.start.id, name, status: "running", input: { order: 7 } });
  });
});

describe("case 32: a poisonous start message", () => {
  it("records a message with a bad body as its tenant's dead letter, with the error, and acks it", async () => {
    const id = uniqueId("bad-body");
    const body = { tenant: "alpha", start: { id, definition: { name: "bad", steps: [] } } };

    const result = await deliverStarts([{ id: "m-bad-body", body }]);

    expect(result.explicitAcks).toEqual(["m-bad-body"]);
    expect(result.retryMessages).toEqual([]);
    const letter = await deadLetterOf("m-bad-body", "alpha");
    expect(letter).toMatchObject({ tenant: "alpha", workflowId: id, attempts: 1, bodyTruncated: false, error: { code: "validation_failed" } });
    expect(letter?.error.message).toBe("Invalid message: start.definition.steps must not be empty.");
    expect(letter?.error.details?.[0]?.path).toEqual(["start", "definition", "steps"]);
    expect(JSON.parse(letter!.body)).toEqual(body);
    expect((await api("GET", `/v1/workflows/${id}`, undefined, { headers: bearer("alpha") })).status).toBe(404);
    // Another tenant sees nothing of it.
    expect(await deadLetterOf("m-bad-body", "beta")).toBeUndefined();
  });

  it("records a message naming a tenant the deployment does not have, and one naming none, and acks both", async () => {
    const start = { id: uniqueId("orphan"), definition: waitingDefinition("orphan") };

    const result = await deliverStarts([
      { id: "m-unknown-tenant", body: { tenant: "nobody", start } },
      { id: "m-no-tenant", body: { start } },
    ]);

    expect(result.explicitAcks.sort()).toEqual(["m-no-tenant", "m-unknown-tenant"]);
    expect(result.retryMessages).toEqual([]);
    // A deployment with several tenants shows them to the tenant STARTS_DEAD_LETTER_TENANT names, and to no other.
    expect(await deadLetterOf("m-unknown-tenant", "default")).toBeUndefined();
    const letters = await deadLettersWithSettings(TOKENS.alpha, { STARTS_DEAD_LETTER_TENANT: "alpha" });
    expect(letters.find((letter) => letter.messageId === "m-unknown-tenant")).toMatchObject({
      tenant: "nobody",
      error: { code: "unknown_tenant", message: expect.stringContaining('No tenant "nobody"') },
    });
    expect(letters.find((letter) => letter.messageId === "m-no-tenant")).toMatchObject({ tenant: null, error: { code: "validation_failed", message: expect.stringContaining("tenant") } });
    expect((await api("GET", `/v1/workflows/${start.id}`)).status).toBe(404);
  });

  it("acks a poisonous message delivered through the real queue once, never retrying it", async () => {
    const deliveries = watchDeliveries();
    await env.STARTS.send({ tenant: "default", start: { definitionRef: { name: uniqueId("never-published") } } });

    await vi.waitFor(async () => expect((await deadLettersOf()).some((letter) => letter.error.code === "not_found")).toBe(true), { timeout: 10_000, interval: 50 });
    const mine = deliveries.deliveries.filter((delivery) => delivery.queue === "shepherd-starts");
    expect(mine.map((delivery) => [delivery.attempts, delivery.answer])).toEqual([[1, "ack"]]);
  });
});

describe("case 32: a start refused for now", () => {
  it("is retried after the front door's Retry-After while back-pressure refuses it, never a dead letter, then started once admitted", async () => {
    const name = uniqueId("deferred");
    const message = { id: "m-deferred", body: { tenant: "default", start: { id: uniqueId("queued"), definition: waitingDefinition(name) } } };
    await queueLagOf(25_000, "default", name);

    const refused = await deliverStarts([message]);

    expect(refused.explicitAcks).toEqual([]);
    // 25 s of lag against the 10 s bound: come back in 15 s, as a client would be told.
    expect(refused.retryMessages).toEqual([{ msgId: "m-deferred" }]);
    expect(refused.delays).toEqual({ "m-deferred": 15 });
    expect(await deadLetterOf("m-deferred")).toBeUndefined();
    expect((await api("GET", `/v1/workflows/${message.body.start.id}`)).status).toBe(404);

    await queueLagOf(0);
    const admitted = await deliverStarts([{ ...message, attempts: 2 }]);

    expect(admitted.explicitAcks).toEqual(["m-deferred"]);
    expect((await api("GET", `/v1/workflows/${message.body.start.id}`)).body).toMatchObject({ name, status: "running" });
    expect(await deadLetterOf("m-deferred")).toBeUndefined();
  });
});
