import { afterEach, describe, expect, it, vi } from "vitest";
import { api, historyOf, start, waitForStatus, waitForStep } from "../helpers/api";
import { hang, json, mockRemote, REMOTE } from "../helpers/remote";
import { FAST } from "../helpers/policies";

afterEach(() => vi.restoreAllMocks());

const escalating = (steps: unknown[]) => ({ name: "escalating", onFailure: "escalate", defaults: FAST, steps });

describe("operator actions", () => {
  it("escalates a failed step and lets an operator retry it with a fresh attempt budget", async () => {
    let healthy = false;
    const remote = mockRemote((call) => (new URL(call.url).pathname === "/charge" && !healthy ? json({ error: "card declined" }, 402) : json({ ok: true })));
    const { id } = await start(escalating([{ id: "charge", action: { type: "http", url: `${REMOTE}/charge` } }, { id: "ship", action: { type: "http", url: `${REMOTE}/ship` } }]));
    await waitForStatus(id, "needs_attention");
    expect(remote.callsTo("/ship")).toHaveLength(0);

    healthy = true;
    const retried = await api("POST", `/v1/workflows/${id}/steps/charge/retry`);
    expect(retried.status).toBe(202);
    const workflow = await waitForStatus(id, "completed");
    expect(workflow.steps[0].attempt).toBe(2);
    expect((await historyOf(id)).some((event) => event.type === "operator_action" && event.data.action === "retry_step")).toBe(true);
  });

  it("lets an operator skip a failed step, handing its output to the steps after it", async () => {
    const remote = mockRemote((call) => (new URL(call.url).pathname === "/lookup" ? json({}, 404) : json({ ok: true })));
    const { id } = await start(
      escalating([
        { id: "lookup", action: { type: "http", url: `${REMOTE}/lookup` } },
        { id: "use", action: { type: "http", url: `${REMOTE}/use`, body: { value: "{{ steps.lookup.output.value }}" } } },
      ]),
    );
    await waitForStatus(id, "needs_attention");
    const skipped = await api("POST", `/v1/workflows/${id}/steps/lookup/skip`, { output: { value: 7 } });
    expect(skipped.status).toBe(202);
    const workflow = await waitForStatus(id, "completed");
    expect(workflow.steps[0].status).toBe("skipped");
    expect(remote.callsTo("/use")[0]?.body).toEqual({ value: 7 });
  });

  it("lets an operator give up and compensate a workflow that needs attention", async () => {
    const remote = mockRemote((call) => (new URL(call.url).pathname === "/ship" ? json({}, 400) : json({ ok: true })));
    const { id } = await start(
      escalating([
        { id: "charge", action: { type: "http", url: `${REMOTE}/charge` }, compensate: { type: "http", url: `${REMOTE}/refund` } },
        { id: "ship", action: { type: "http", url: `${REMOTE}/ship` } },
      ]),
    );
    await waitForStatus(id, "needs_attention");
    expect((await api("POST", `/v1/workflows/${id}/compensate`)).status).toBe(202);
    await waitForStatus(id, "compensated");
    expect(remote.callsTo("/refund")).toHaveLength(1);
  });

  it("refuses operator step actions unless the workflow needs attention", async () => {
    mockRemote((call) => hang(call));
    const { id } = await start(escalating([{ id: "slow", action: { type: "http", url: `${REMOTE}/slow` } }]));
    for (const path of [`/v1/workflows/${id}/steps/slow/retry`, `/v1/workflows/${id}/steps/slow/skip`, `/v1/workflows/${id}/compensate`]) {
      const response = await api("POST", path, {});
      expect(response.status, path).toBe(409);
      expect(response.body.error.code).toBe("conflict");
    }
    await api("POST", `/v1/workflows/${id}/cancel`);
  });

  it("cancels a running workflow: fences the running attempt, compensates what succeeded, ends cancelled", async () => {
    const remote = mockRemote((call) => (new URL(call.url).pathname === "/ship" ? hang(call) : json({ ok: true })));
    const { id } = await start({
      name: "cancellable",
      defaults: FAST,
      steps: [
        { id: "charge", action: { type: "http", url: `${REMOTE}/charge` }, compensate: { type: "http", url: `${REMOTE}/refund` } },
        { id: "ship", action: { type: "http", url: `${REMOTE}/ship` } },
      ],
    });
    await waitForStep(id, "ship", "running");
    const cancelled = await api("POST", `/v1/workflows/${id}/cancel`);
    expect(cancelled.status).toBe(202);
    const workflow = await waitForStatus(id, "cancelled");
    expect(workflow.steps.map((s: { status: string }) => s.status)).toEqual(["compensated", "cancelled"]);
    expect(workflow.steps[1].attempts[0].status).toBe("cancelled");
    expect(remote.callsTo("/refund")).toHaveLength(1);

    // The fenced attempt's token now reports cancellation, and its late completion is refused.
    const token = remote.callsTo("/ship")[0]!.headers["shepherd-task-token"];
    const heartbeat = await api("POST", `/v1/tasks/${token}/heartbeat`, {});
    expect(heartbeat.body).toEqual({ cancelRequested: true });
    expect((await api("POST", `/v1/tasks/${token}/complete`, { output: {} })).status).toBe(410);
    expect((await api("POST", `/v1/workflows/${id}/cancel`)).status).toBe(409);
  });
});
