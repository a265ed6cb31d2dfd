// The STARTS queue's consumer message by message: each outcome of a start (started, refused for good, refused for
// now, failed) and what the consumer answers the queue, through the Worker's queue handler with real objects and D1.
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { COPY_AFTER_DELIVERIES } from "../../src/starts/start-consumer";
import { api, bearer, historyOf, uniqueId } from "../helpers/api";
import { publish } from "../helpers/registry";
import { deadLetterOf, deliver, deliverStarts, queueLagOf, waitingDefinition } from "../helpers/starts";

afterEach(async () => {
  vi.restoreAllMocks();
  await queueLagOf(0);
});

const OVERLOADED = Object.assign(new Error("Durable Object is overloaded. Too many requests queued."), { retryable: false, overloaded: true });

/** Every workflow object's `start` throws what the platform throws for an overloaded object; the binding alone is wrapped. */
function overloadStarts() {
  const namespace = env.WORKFLOW_SCHEDULER;
  const getByName = namespace.getByName.bind(namespace);
  vi.spyOn(namespace, "getByName").mockImplementation((name: string) => {
    const stub = getByName(name);
    return new Proxy(stub, { get: (target, property) => (property === "start" ? async () => Promise.reject(OVERLOADED) : Reflect.get(target, property)) });
  });
}

const startMessage = (tenant: string, start: Record<string, unknown>) => ({ tenant, start: { id: uniqueId("queued"), ...start } });

describe("a start message that starts", () => {
  it("starts a published definition by reference, as POST /v1/workflows would", async () => {
    const name = uniqueId("by-ref");
    expect((await publish(waitingDefinition(name))).status).toBe(201);
    const message = startMessage("default", { definitionRef: { name }, input: { n: 1 } });

    expect((await deliverStarts([{ id: "m-by-ref", body: message }])).explicitAcks).toEqual(["m-by-ref"]);
    expect((await api("GET", `/v1/workflows/${message.start.id}`)).body).toMatchObject({ name, definition: { name, version: 1 }, input: { n: 1 } });
  });

  it("answers a message whose start was already made by POST /v1/workflows with the same body, starting nothing more", async () => {
    const body = { id: uniqueId("both-doors"), definition: waitingDefinition("both-doors") };
    expect((await api("POST", "/v1/workflows", body)).status).toBe(201);

    expect((await deliverStarts([{ id: "m-both-doors", body: { tenant: "default", start: body } }])).explicitAcks).toEqual(["m-both-doors"]);
    expect((await historyOf(body.id)).filter((event) => event.type === "workflow_started")).toHaveLength(1);
  });
});

describe("a start message that can never start", () => {
  it("is a conflict dead letter when its id was started with another body, and the workflow under it is left alone", async () => {
    const id = uniqueId("taken");
    expect((await api("POST", "/v1/workflows", { id, definition: waitingDefinition("first") })).status).toBe(201);
    const before = await historyOf(id);

    const result = await deliverStarts([{ id: "m-conflict", body: { tenant: "default", start: { id, definition: waitingDefinition("second") } } }]);

    expect(result.explicitAcks).toEqual(["m-conflict"]);
    expect(await deadLetterOf("m-conflict")).toMatchObject({ workflowId: id, error: { code: "conflict" } });
    expect(await historyOf(id)).toEqual(before);
  });

  it("is a validation dead letter when the tenant's targets refuse its definition", async () => {
    // vitest.config.ts limits tenant gamma to allowed.example and its subdomains.
    const message = startMessage("gamma", { definition: { name: "elsewhere", steps: [{ id: "call", action: { type: "http", url: "https://elsewhere.example/x" } }] } });

    expect((await deliverStarts([{ id: "m-target", body: message }])).explicitAcks).toEqual(["m-target"]);
    const letter = await deadLetterOf("m-target", "gamma");
    expect(letter?.error).toMatchObject({ code: "validation_failed", details: [expect.objectContaining({ path: ["definition", "steps", 0, "action", "url"] })] });
  });

  it("is recorded once when delivered again before its ack landed: the same row, its deliveries counted", async () => {
    const body = { tenant: "default", start: { definition: { name: "no-steps", steps: [] } } };
    await deliverStarts([{ id: "m-poison-twice", body }]);
    const first = await deadLetterOf("m-poison-twice");

    await deliverStarts([{ id: "m-poison-twice", body, attempts: 2 }]);

    const again = await deadLetterOf("m-poison-twice");
    expect(again).toMatchObject({ attempts: 2, firstSeenAt: first!.firstSeenAt });
    expect(again!.lastSeenAt).toBeGreaterThanOrEqual(first!.lastSeenAt);
  });

  it("is retried, not acked, while its dead letter cannot be recorded (D1 down), and recorded on the next delivery", async () => {
    const body = { tenant: "default", start: { definition: { name: "no-steps", steps: [] } } };
    vi.spyOn(env.DB, "batch").mockRejectedValueOnce(new Error("D1_ERROR: Network connection lost."));

    const failed = await deliverStarts([{ id: "m-d1-down", body }]);

    expect(failed.explicitAcks).toEqual([]);
    expect(failed.retryMessages).toEqual([{ msgId: "m-d1-down" }]);
    expect(await deadLetterOf("m-d1-down")).toBeUndefined();
    expect((await deliverStarts([{ id: "m-d1-down", body, attempts: 2 }])).explicitAcks).toEqual(["m-d1-down"]);
    expect(await deadLetterOf("m-d1-down")).toMatchObject({ error: { code: "validation_failed" }, attempts: 2 });
  });
});

describe("a start message refused for now", () => {
  it("is retried with a growing delay while the workflow's object is overloaded, never a dead letter", async () => {
    overloadStarts();
    const message = startMessage("default", { definition: waitingDefinition("overloaded") });

    const first = await deliverStarts([{ id: "m-overloaded", body: message }]);
    const fifth = await deliverStarts([{ id: "m-overloaded", body: message, attempts: 5 }]);

    expect(first.retryMessages).toEqual([{ msgId: "m-overloaded" }]);
    // 2 s, then doubling (± 20 %): 32 s at the fifth delivery.
    expect(first.delays["m-overloaded"]).toBeGreaterThanOrEqual(2);
    expect(first.delays["m-overloaded"]).toBeLessThanOrEqual(3);
    expect(fifth.delays["m-overloaded"]).toBeGreaterThanOrEqual(25);
    expect(fifth.delays["m-overloaded"]).toBeLessThanOrEqual(39);
    expect(await deadLetterOf("m-overloaded")).toBeUndefined();
  });

  it(`is sent again as a fresh copy after ${COPY_AFTER_DELIVERIES} deliveries, so it never runs out of retries, and the copy starts the workflow the original would have`, async () => {
    const name = uniqueId("long-wait");
    await queueLagOf(25_000, "default", name);
    const sent: unknown[] = [];
    vi.spyOn(env.STARTS, "send").mockImplementation(async (body) => {
      sent.push(body);
      return {} as QueueSendResponse;
    });
    const message = { tenant: "default", start: { definition: waitingDefinition(name) } };

    const result = await deliverStarts([{ id: "m-long-wait", body: message, attempts: COPY_AFTER_DELIVERIES }]);

    expect(result.explicitAcks).toEqual(["m-long-wait"]);
    expect(result.retryMessages).toEqual([]);
    // The copy names the id the original's deliveries would have started, and waits as long as the original would.
    expect(sent).toEqual([{ tenant: "default", start: { ...message.start, id: "msg_m-long-wait" } }]);
    expect(env.STARTS.send).toHaveBeenCalledWith(sent[0], { delaySeconds: 15 });

    await queueLagOf(0);
    expect((await deliverStarts([{ id: "m-copy", body: sent[0] }])).explicitAcks).toEqual(["m-copy"]);
    expect((await api("GET", "/v1/workflows/msg_m-long-wait")).body).toMatchObject({ name, status: "running" });
  });

  it("is retried as before when its copy cannot be sent", async () => {
    const name = uniqueId("no-copy");
    await queueLagOf(25_000, "default", name);
    vi.spyOn(env.STARTS, "send").mockRejectedValue(new Error("Queue send failed: internal error"));

    const result = await deliverStarts([{ id: "m-no-copy", body: startMessage("default", { definition: waitingDefinition(name) }), attempts: COPY_AFTER_DELIVERIES + 1 }]);

    expect(result.explicitAcks).toEqual([]);
    expect(result.retryMessages).toEqual([{ msgId: "m-no-copy" }]);
    expect(result.delays).toEqual({ "m-no-copy": 15 });
  });

  it("is retried while API_TOKENS is malformed: the deployment is at fault, not the message", async () => {
    const batch = await deliverStarts([{ id: "m-bad-tokens", body: startMessage("default", { definition: waitingDefinition("bad-tokens") }) }], { API_TOKENS: "default" });
    expect(batch.retryMessages).toEqual([{ msgId: "m-bad-tokens" }]);
    expect(await deadLetterOf("m-bad-tokens")).toBeUndefined();
  });
});

describe("the starts' dead-letter queue", () => {
  it("records what the queue gave up on, with why it could not start when it never could, and acks it", async () => {
    const valid = startMessage("alpha", { definition: waitingDefinition("given-up") });
    const invalid = { tenant: "alpha", start: { definition: { name: "no-steps", steps: [] } } };

    const result = await deliver("shepherd-starts-dlq", [{ id: "m-given-up", body: valid }, { id: "m-given-up-bad", body: invalid }]);

    expect(result.explicitAcks.sort()).toEqual(["m-given-up", "m-given-up-bad"]);
    expect(await deadLetterOf("m-given-up", "alpha")).toMatchObject({ workflowId: valid.start.id, error: { code: "retries_exhausted" } });
    expect(await deadLetterOf("m-given-up-bad", "alpha")).toMatchObject({ error: { code: "validation_failed" } });
    // Recorded, not started: the operator decides.
    expect((await api("GET", `/v1/workflows/${valid.start.id}`, undefined, { headers: bearer("alpha") })).status).toBe(404);
  });

  it("retries a message it could not record", async () => {
    vi.spyOn(env.DB, "batch").mockRejectedValueOnce(new Error("D1_ERROR: Network connection lost."));
    const result = await deliver("shepherd-starts-dlq", [{ id: "m-given-up-d1", body: startMessage("alpha", { definition: waitingDefinition("given-up") }) }]);
    expect(result.retryMessages).toEqual([{ msgId: "m-given-up-d1" }]);
  });
});
