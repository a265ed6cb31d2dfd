import { afterEach, describe, expect, it, vi } from "vitest";
import { historyOf, start, uniqueId, waitForStatus } from "../helpers/api";
import { indexRow } from "../helpers/index-db";
import { json, mockRemote, REMOTE, type RemoteCall } from "../helpers/remote";
import { FAST } from "../helpers/policies";
import { objectRecord } from "../helpers/scheduler";
import { sleep } from "../helpers/time";

afterEach(() => vi.restoreAllMocks());

function step(id: string, options: { dependsOn?: string[]; compensate?: boolean } = {}) {
  return {
    id,
    ...(options.dependsOn ? { dependsOn: options.dependsOn } : {}),
    action: { type: "http", url: `${REMOTE}/${id}` },
    ...(options.compensate === false ? {} : { compensate: { type: "http", url: `${REMOTE}/undo-${id}`, body: { undo: `{{ steps.${id}.output.ref }}` } } }),
  };
}

/**
 * "reserve" and "charge" run in parallel and "charge" finishes first, so the reverse order of completion
 * (reserve, then charge) differs from the reverse order of definition; "notify" has no compensation; "ship" is refused.
 */
const order = {
  name: "order",
  defaults: FAST,
  steps: [
    step("reserve", { dependsOn: [] }),
    step("charge", { dependsOn: [] }),
    step("notify", { dependsOn: ["reserve", "charge"], compensate: false }),
    step("ship", { dependsOn: ["notify"] }),
  ],
};

const pathOf = (call: RemoteCall) => new URL(call.url).pathname;

function orderRemote(undo: (path: string) => Response = () => json({ undone: true })) {
  return mockRemote(async (call) => {
    const path = pathOf(call);
    if (path === "/ship") return json({ error: "address rejected" }, 422);
    if (path.startsWith("/undo-")) return undo(path);
    if (path === "/reserve") await sleep(60);
    return json({ ref: `${path.slice(1)}-ref` });
  });
}

describe("case 9: remote 4xx", () => {
  it("does not retry a 422; compensates the completed steps in reverse order of completion and ends compensated", async () => {
    const remote = orderRemote();
    const id = uniqueId();
    await start(order, { id });
    const workflow = await waitForStatus(id, "compensated");

    // No retry of the refused step: one request, one failed attempt, marked permanent.
    expect(remote.requestsFor(`${id}:ship`)).toBe(1);
    expect(workflow.steps[3]).toMatchObject({ id: "ship", status: "failed", attempt: 1, error: { status: 422, retryable: false } });
    const history = await historyOf(id);
    expect(history.filter((event) => event.type === "step_retry_scheduled")).toEqual([]);
    expect(history.find((event) => event.type === "step_failed")).toMatchObject({ stepId: "ship", attempt: 1, data: { final: true } });

    // Compensations in reverse order of completion, each with its own idempotency key and the step's output.
    const completion = history.filter((event) => event.type === "step_succeeded").map((event) => event.stepId);
    expect(completion).toEqual(["charge", "reserve", "notify"]);
    expect(history.find((event) => event.type === "compensation_started")).toMatchObject({ data: { steps: ["reserve", "charge"], endStatus: "compensated" } });
    const undos = remote.calls.filter((call) => pathOf(call).startsWith("/undo-"));
    expect(undos.map((call) => [pathOf(call), call.headers["idempotency-key"], call.body])).toEqual([
      ["/undo-reserve", `${id}:reserve:compensate`, { undo: "reserve-ref" }],
      ["/undo-charge", `${id}:charge:compensate`, { undo: "charge-ref" }],
    ]);
    expect(history.filter((event) => event.type === "step_compensated").map((event) => event.stepId)).toEqual(["reserve", "charge"]);

    expect(workflow.steps.map((s: { id: string; status: string }) => [s.id, s.status])).toEqual([
      ["reserve", "compensated"],
      ["charge", "compensated"],
      ["notify", "succeeded"],
      ["ship", "failed"],
    ]);
    expect(workflow.error.message).toMatch(/step "ship" failed: remote answered 422/);
    expect(history.at(-1)!.type).toBe("workflow_compensated");
    await vi.waitFor(async () => expect(await indexRow(id)).toMatchObject({ status: "compensated", ended_at: workflow.endedAt, version: (await objectRecord(id)).workflow!.version }));
  });

  it("goes to needs_attention when a compensation fails for good, holding the rest of the compensations", async () => {
    const remote = orderRemote((path) => (path === "/undo-reserve" ? json({ error: "already shipped" }, 422) : json({ undone: true })));
    const id = uniqueId();
    await start(order, { id });
    const workflow = await waitForStatus(id, "needs_attention");

    expect(workflow.steps[0]).toMatchObject({ id: "reserve", status: "failed", error: { status: 422, retryable: false } });
    // The refused refund is not retried, and the next compensation waits for an operator.
    expect(remote.requestsFor(`${id}:reserve:compensate`)).toBe(1);
    expect(remote.requestsFor(`${id}:charge:compensate`)).toBe(0);
    expect(workflow.steps[1]).toMatchObject({ id: "charge", status: "succeeded" });
    const escalated = (await historyOf(id)).find((event) => event.type === "workflow_escalated");
    expect(escalated).toMatchObject({ stepId: "reserve", data: { phase: "compensation" } });
    await vi.waitFor(async () => expect(await indexRow(id)).toMatchObject({ status: "needs_attention", version: (await objectRecord(id)).workflow!.version }));
    expect((await objectRecord(id)).alarmAt).toBeNull();
  });
});
