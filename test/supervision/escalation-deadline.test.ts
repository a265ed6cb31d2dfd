import { afterEach, describe, expect, it, vi } from "vitest";
import { api, historyOf, start, uniqueId, waitForStatus } from "../helpers/api";
import { FAST } from "../helpers/policies";
import { json, mockRemote, REMOTE } from "../helpers/remote";
import { alarmOf } from "../helpers/scheduler";
import { elapse } from "../helpers/time";

afterEach(() => vi.restoreAllMocks());

const HOUR = 3_600_000;

/** Ships, then fails to invoice for good (422); nobody answers the escalation. */
const definition = (then: string) => ({
  name: `escalate-then-${then}`,
  onFailure: { escalate: { afterMs: HOUR, then } },
  defaults: FAST,
  steps: [
    { id: "ship", action: { type: "http", url: `${REMOTE}/ship` }, compensate: { type: "http", url: `${REMOTE}/unship` } },
    { id: "invoice", action: { type: "http", url: `${REMOTE}/invoice` } },
  ],
});

const remoteThatRefusesInvoices = () => mockRemote((call) => (new URL(call.url).pathname === "/invoice" ? json({ error: "no such customer" }, 422) : json({ ok: true })));

describe("escalation with a deadline (onFailure.escalate)", () => {
  it("waits on an operator until attentionDeadline, the alarm set for it, then runs `then: compensate` itself", async () => {
    const remote = remoteThatRefusesInvoices();
    const id = uniqueId("escalate");
    await start(definition("compensate"), { id });
    const escalated = await waitForStatus(id, "needs_attention");
    expect(escalated.attentionDeadline - escalated.updatedAt).toBe(HOUR);
    // One more deadline of the alarm: the alarm is never later than it.
    expect(await alarmOf(id)).toBeLessThanOrEqual(escalated.attentionDeadline);
    const { body } = await api("GET", `/v1/workflows/${id}/diagnosis`);
    expect(body.nextDeadline).toEqual({ at: escalated.attentionDeadline, reason: "attention_deadline" });
    expect(body.blockedOn).toEqual([expect.objectContaining({ stepId: "invoice", reason: "needs_operator", until: escalated.attentionDeadline })]);

    await elapse(id, HOUR);
    const workflow = await waitForStatus(id, "compensated");
    expect(workflow.attentionDeadline).toBeUndefined();
    expect(remote.callsTo("/unship")).toHaveLength(1);
    const expired = (await historyOf(id)).find((event) => event.type === "escalation_expired");
    expect(expired).toMatchObject({ stepId: "invoice", data: { then: "compensate" } });
    expect(expired!.data.overdueMs).toBeLessThan(1_000);
  });

  it("runs `then: skip`: the failed step counts as done and the workflow completes", async () => {
    remoteThatRefusesInvoices();
    const id = uniqueId("escalate-skip");
    await start(definition("skip"), { id });
    await waitForStatus(id, "needs_attention");
    await elapse(id, HOUR);
    const workflow = await waitForStatus(id, "completed");
    expect(workflow.output).toEqual({ ship: { ok: true }, invoice: null });
  });

  it("stops the clock when an operator acts in time: no default action, no alarm left for it", async () => {
    remoteThatRefusesInvoices();
    const id = uniqueId("escalate-answered");
    await start(definition("fail"), { id });
    await waitForStatus(id, "needs_attention");
    expect((await api("POST", `/v1/workflows/${id}/steps/invoice/skip`, { output: { manual: true } })).status).toBe(202);
    const workflow = await waitForStatus(id, "completed");
    expect(workflow.attentionDeadline).toBeUndefined();
    expect(await alarmOf(id)).toBeNull();
    expect((await historyOf(id)).map((event) => event.type)).not.toContain("escalation_expired");
  });

  it("refuses a bad escalation with a 400 that names the field, and starts nothing", async () => {
    for (const onFailure of [{ escalate: { afterMs: 0, then: "compensate" } }, { escalate: { afterMs: HOUR, then: "ignore" } }, { escalate: { then: "fail" } }]) {
      const id = uniqueId("bad-escalation");
      const response = await api("POST", "/v1/workflows", { id, definition: { ...definition("fail"), onFailure } });
      expect(response.status).toBe(400);
      expect(JSON.stringify(response.body.error.details)).toContain("onFailure");
      expect((await api("GET", `/v1/workflows/${id}`)).status).toBe(404);
    }
  });
});
