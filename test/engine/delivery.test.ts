import { createExecutionContext, createMessageBatch, evictDurableObject, getQueueResult } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import worker from "../../src/index";
import { start, uniqueId, waitForStatus, waitForStep } from "../helpers/api";
import { json, mockRemote, REMOTE } from "../helpers/remote";
import { holdBackSends } from "../helpers/queue";
import { alarmOf, schedulerStub } from "../helpers/scheduler";
import { FAST } from "../helpers/policies";

afterEach(() => vi.restoreAllMocks());

describe("at-least-once delivery", () => {
  it("case 5 (duplicate delivery): performs a twice-delivered task once: the second delivery is acked without calling the remote", async () => {
    const remote = mockRemote(() => json({ ok: true }));
    const id = uniqueId();
    const held = holdBackSends(id);
    await start({ name: "dup", defaults: FAST, steps: [{ id: "charge", action: { type: "http", url: `${REMOTE}/charge` } }] }, { id });
    const body = held[0]!;
    const batch = createMessageBatch("shepherd-tasks", [
      { id: "m-1", timestamp: new Date(), attempts: 1, body },
      { id: "m-1-redelivered", timestamp: new Date(), attempts: 2, body },
    ]);
    const ctx = createExecutionContext();
    await worker.queue(batch, env, ctx);
    const result = await getQueueResult(batch, ctx);
    expect(result.explicitAcks.sort()).toEqual(["m-1", "m-1-redelivered"]);
    expect(result.retryMessages).toEqual([]);

    // And a redelivery after the step finished (an ack that was lost) is dropped too.
    await waitForStatus(id, "completed");
    const late = createMessageBatch("shepherd-tasks", [{ id: "m-1-late", timestamp: new Date(), attempts: 3, body }]);
    const lateCtx = createExecutionContext();
    await worker.queue(late, env, lateCtx);
    expect((await getQueueResult(late, lateCtx)).explicitAcks).toEqual(["m-1-late"]);
    expect(remote.requestsFor(`${id}:charge`)).toBe(1);
  });

  it("acks and drops a malformed message instead of retrying it forever", async () => {
    const batch = createMessageBatch("shepherd-tasks", [{ id: "poison", timestamp: new Date(), attempts: 1, body: { nonsense: true } }]);
    const ctx = createExecutionContext();
    await worker.queue(batch, env, ctx);
    expect((await getQueueResult(batch, ctx)).explicitAcks).toEqual(["poison"]);
  });
});

describe("durability", () => {
  it("case 12 (eviction mid-step): resumes after the object is evicted mid-step: state reloads from storage, the alarm stays armed, the report is accepted", async () => {
    let finish!: () => void;
    const released = new Promise<void>((resolve) => (finish = resolve));
    const remote = mockRemote(async (call) => {
      if (new URL(call.url).pathname === "/slow") await released;
      return json({ path: new URL(call.url).pathname });
    });
    const { id } = await start({
      name: "evicted",
      defaults: FAST,
      steps: [
        { id: "fast", action: { type: "http", url: `${REMOTE}/fast` } },
        { id: "slow", action: { type: "http", url: `${REMOTE}/slow` } },
        { id: "after", action: { type: "http", url: `${REMOTE}/after` } },
      ],
    });
    await waitForStep(id, "slow", "running");
    await evictDurableObject(schedulerStub(id));
    const alarm = await alarmOf(id);
    expect(alarm).not.toBeNull();

    finish();
    const workflow = await waitForStatus(id, "completed");
    expect(workflow.output.after).toEqual({ path: "/after" });
    expect(remote.requestsFor(`${id}:slow`)).toBe(1);
  });
});

describe("an agent that cannot reach the scheduler", () => {
  it("asks for the message to be delivered again instead of failing the whole batch", async () => {
    const id = uniqueId();
    const held = holdBackSends(id);
    await start({ name: "unreachable", defaults: FAST, steps: [{ id: "a", action: { type: "http", url: `${REMOTE}/a` } }] }, { id });
    // Every stub the agent gets fails its claim, as an object does while a deploy resets it.
    const namespace = env.WORKFLOW_SCHEDULER;
    const getByName = namespace.getByName.bind(namespace);
    vi.spyOn(namespace, "getByName").mockImplementation((name: string) => {
      const stub = getByName(name);
      return new Proxy(stub, {
        get: (target, property) =>
          property === "claim" ? () => Promise.reject(new Error("Durable Object reset because its code was updated.")) : Reflect.get(target, property),
      });
    });
    const batch = createMessageBatch("shepherd-tasks", [{ id: "m-throw", timestamp: new Date(), attempts: 1, body: held[0]! }]);
    const ctx = createExecutionContext();
    await worker.queue(batch, env, ctx);
    const result = await getQueueResult(batch, ctx);
    expect(result.explicitAcks).toEqual([]);
    expect(result.retryMessages.map((message) => message.msgId)).toEqual(["m-throw"]);
    vi.restoreAllMocks();
    await schedulerStub(id).command({ command: "cancel", by: { actor: "operator" } });
  });
});
