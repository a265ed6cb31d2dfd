import { runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { start, uniqueId, waitForStatus } from "../helpers/api";
import { json, mockRemote, REMOTE } from "../helpers/remote";
import { schedulerStub } from "../helpers/scheduler";
import { FAST } from "../helpers/policies";
import { taskQueueOf } from "../helpers/queue";

afterEach(() => vi.restoreAllMocks());

describe("eager dispatch", () => {
  it("runs a sequence with one queue message: each next step comes back with the previous step's report", async () => {
    const remote = mockRemote(() => json({ ok: true }));
    const id = uniqueId();
    const sends = await runInDurableObject(schedulerStub(id), (instance) => vi.spyOn(taskQueueOf(id, (instance as unknown as { env: Env }).env), "sendBatch"));
    await start({ name: "eager", defaults: FAST, steps: ["a", "b", "c", "d"].map((step) => ({ id: step, action: { type: "http", url: `${REMOTE}/${step}` } })) }, { id });
    const workflow = await waitForStatus(id, "completed");
    expect(sends).toHaveBeenCalledTimes(1);
    expect(workflow.steps.map((step: { attempts: unknown[] }) => step.attempts.length)).toEqual([1, 1, 1, 1]);
    expect(remote.calls.map((call) => new URL(call.url).pathname)).toEqual(["/a", "/b", "/c", "/d"]);
  });
});
