import { runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { clearInjectedFaults, injectFault, timesFired } from "../../src/dev/faults";
import { CONSUMER_LEASE_MS } from "../../src/workflow/deliveries/webhooks";
import { api, uniqueId, waitForStatus } from "../helpers/api";
import { FAST } from "../helpers/policies";
import { REMOTE } from "../helpers/remote";
import { schedulerStub } from "../helpers/scheduler";
import { elapse } from "../helpers/time";
import { cursorRow, mockReceivers, subscribe, verified } from "../helpers/webhooks";

afterEach(() => {
  clearInjectedFaults();
  vi.restoreAllMocks();
});

const oneStep = { name: "crashing", defaults: FAST, steps: [{ id: "a", action: { type: "http", url: `${REMOTE}/a` } }] };
const EVERY_EVENT = ["workflow.started", "step.scheduled", "step.started", "step.succeeded", "workflow.completed"];

async function waitUntilAnnounced(workflowId: string) {
  await vi.waitFor(async () => expect(await cursorRow(workflowId)).toBeUndefined(), { timeout: 10_000, interval: 20 });
}

describe("a crash between persisting a transition and sending its webhook message", () => {
  it("loses no event when the object dies before the commit was durable: the retried call commits it whole, cursor included", async () => {
    const receivers = mockReceivers();
    const hook = await subscribe(["*"]);
    const id = uniqueId();
    injectFault("abortAfterPersist", { probability: 1, times: 1 });

    const started = await api("POST", "/v1/workflows", { id, definition: oneStep });
    expect(timesFired("abortAfterPersist")).toBe(1);
    expect(started.status).toBe(201);
    await waitForStatus(id, "completed");
    await waitUntilAnnounced(id);

    const got = receivers.of(hook.id, id);
    expect(got.map((entry) => entry.type)).toEqual(EVERY_EVENT);
    expect(got.map((entry) => entry.seq)).toEqual([1, 2, 3, 4, 5]);
    for (const entry of got) expect(verified(entry, hook.secret)).toEqual(entry.body);
  });

  it("loses no event when the commit was durable and only the send was lost: the alarm sends it once its lease lapses", async () => {
    const receivers = mockReceivers();
    const hook = await subscribe(["workflow.*", "step.succeeded"]);
    const id = uniqueId();
    let crashed = false;
    await runInDurableObject(schedulerStub(id), (instance, state) => {
      const queue = (instance as unknown as { env: Env }).env.WEBHOOKS;
      const send = queue.send.bind(queue);
      vi.spyOn(queue, "send").mockImplementation(async (body, options) => {
        if (!crashed && (body as { workflowId: string }).workflowId === id) {
          crashed = true;
          // The cursor row, leased to the message about to go, is on disk; the message never leaves.
          await state.storage.sync();
          state.abort("crash after the commit, before the webhook send");
        }
        return send(body, options);
      });
    });

    expect([200, 201]).toContain((await api("POST", "/v1/workflows", { id, definition: oneStep })).status);
    await waitForStatus(id, "completed");
    expect(crashed).toBe(true);
    expect(await cursorRow(id)).toMatchObject({ afterSeq: 0, inFlight: true });
    expect(receivers.of(hook.id, id)).toEqual([]);

    // Nobody else calls the object: once the lease is over, its alarm sends the message again.
    await elapse(id, CONSUMER_LEASE_MS);
    await waitUntilAnnounced(id);

    expect(receivers.of(hook.id, id).map((entry) => entry.type)).toEqual(["workflow.started", "step.succeeded", "workflow.completed"]);
  });
});
