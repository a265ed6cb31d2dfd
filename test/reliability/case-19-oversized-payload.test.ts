import { runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { api, uniqueId, waitForStatus } from "../helpers/api";
import { json, mockRemote, REMOTE } from "../helpers/remote";
import { schedulerStub } from "../helpers/scheduler";
import { FAST } from "../engine/fixtures";

afterEach(() => vi.restoreAllMocks());

const QUEUE_MESSAGE_LIMIT = 120 * 1024;

async function watchSends(id: string) {
  const sizes: number[] = [];
  await runInDurableObject(schedulerStub(id), (instance) => {
    const queue = (instance as unknown as { env: Env }).env.TASKS;
    const send = queue.sendBatch.bind(queue);
    vi.spyOn(queue, "sendBatch").mockImplementation(async (messages: Iterable<MessageSendRequest<unknown>>) => {
      const list = [...messages];
      for (const message of list) sizes.push(new TextEncoder().encode(JSON.stringify(message.body)).byteLength);
      return send(list);
    });
  });
  return sizes;
}

const definition = { name: "big", defaults: FAST, steps: [{ id: "a", action: { type: "http", url: `${REMOTE}/a`, body: { all: "{{ input }}" } } }] };

describe("case 19: oversized payload", () => {
  it("refuses an input over 128 KiB with 400 before anything is stored or enqueued", async () => {
    const id = uniqueId();
    const sizes = await watchSends(id);
    const response = await api("POST", "/v1/workflows", { id, definition, input: { blob: "x".repeat(130 * 1024) } });
    expect(response.status).toBe(400);
    expect(response.body.error.details).toContainEqual(expect.objectContaining({ path: ["input"] }));
    expect(sizes).toEqual([]);
    expect((await api("GET", `/v1/workflows/${id}`)).status).toBe(404);
  });

  it("keeps queue messages small whatever the payload: a message names the attempt, the agent claims the rest", async () => {
    const remote = mockRemote(() => json({ ok: true }));
    const id = uniqueId();
    const sizes = await watchSends(id);
    const input = { blob: "x".repeat(127 * 1024) };
    expect((await api("POST", "/v1/workflows", { id, definition, input })).status).toBe(201);
    await waitForStatus(id, "completed");
    expect(sizes.length).toBeGreaterThan(0);
    expect(Math.max(...sizes)).toBeLessThan(1024);
    expect(Math.max(...sizes)).toBeLessThan(QUEUE_MESSAGE_LIMIT);
    // The full payload still reached the remote, through the claim.
    expect(remote.calls[0]!.body.all).toEqual(input);
  });
});
