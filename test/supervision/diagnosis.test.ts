import { runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { api, start, startAs, uniqueId, waitForStatus, waitForStep } from "../helpers/api";
import { PATIENT } from "../helpers/policies";
import { json, mockRemote, REMOTE } from "../helpers/remote";
import { schedulerStub } from "../helpers/scheduler";
import { control, sleepStep, waitStep } from "../helpers/workflow-language";

afterEach(() => vi.restoreAllMocks());

const diagnosisOf = async (id: string, tenant: Parameters<typeof api>[3] = {}) => api("GET", `/v1/workflows/${id}/diagnosis`, undefined, tenant);

describe("GET /v1/workflows/{id}/diagnosis", () => {
  it("names a step backing off after a 503: since, until, the next deadline and the alarm, attempts used of max, the decision that led there", async () => {
    mockRemote(() => json({ error: "busy" }, 503));
    const id = uniqueId("diag-backoff");
    await start({ name: "diag-backoff", defaults: PATIENT, steps: [{ id: "charge", action: { type: "http", url: `${REMOTE}/charge` } }] }, { id });
    const workflow = await waitForStep(id, "charge", "retrying");
    const { status, body } = await diagnosisOf(id);
    expect(status).toBe(200);
    expect(body).toMatchObject({
      status: "running",
      healthy: true,
      problems: [],
      blockedOn: [{ stepId: "charge", reason: "backing_off", until: workflow.steps[0].nextRetryAt }],
      nextDeadline: { at: workflow.steps[0].nextRetryAt, reason: "retry", stepId: "charge" },
      attempts: { charge: { used: 1, max: PATIENT.retry.maxAttempts } },
    });
    expect(body.blockedOn[0].since).toBe(workflow.steps[0].attempts[0].endedAt);
    expect(body.blockedOn[0].detail).toContain("503");
    expect(body.alarmAt).toBeLessThanOrEqual(body.nextDeadline.at);
    expect(body.recentDecisions[0]).toMatchObject({ type: "step_retry_scheduled", stepId: "charge", attempt: 1 });
  });

  it("names the event a step waits for and a sleep's wake time, with their deadlines", async () => {
    const id = uniqueId("diag-wait");
    await start({ name: "diag-wait", steps: [{ ...waitStep("approve", { event: "approved", timeoutMs: 86_400_000 }) }, { ...sleepStep("cool-off", { durationMs: 3_600_000 }), dependsOn: [] }] }, { id });
    const { body } = await diagnosisOf(id);
    const byStep = Object.fromEntries(body.blockedOn.map((entry: { stepId: string }) => [entry.stepId, entry]));
    expect(byStep.approve).toMatchObject({ reason: "waiting_for_event", detail: expect.stringContaining('"approved"') });
    expect(byStep.approve.until - byStep.approve.since).toBe(86_400_000);
    expect(byStep["cool-off"]).toMatchObject({ reason: "sleeping" });
    expect(byStep["cool-off"].until - byStep["cool-off"].since).toBe(3_600_000);
    expect(body.nextDeadline).toEqual({ at: byStep["cool-off"].until, reason: "sleep", stepId: "cool-off" });
    expect(body.healthy).toBe(true);
  });

  it("names the operator as the outside party of a paused workflow and of one that needs attention", async () => {
    mockRemote(() => json({ error: "no" }, 422));
    const id = uniqueId("diag-people");
    await start({ name: "diag-people", onFailure: "escalate", steps: [{ id: "a", action: { type: "http", url: `${REMOTE}/a` } }] }, { id });
    await waitForStatus(id, "needs_attention");
    const { body } = await diagnosisOf(id);
    expect(body).toMatchObject({ healthy: true, nextDeadline: null, blockedOn: [{ stepId: "a", reason: "needs_operator" }] });

    const paused = uniqueId("diag-paused");
    await start({ name: "diag-paused", steps: [sleepStep("nap", { durationMs: 3_600_000 })] }, { id: paused });
    expect((await control(paused, "pause")).status).toBe(202);
    const pausedBody = (await diagnosisOf(paused)).body;
    expect(pausedBody).toMatchObject({ status: "paused", healthy: true, nextDeadline: null });
    expect(pausedBody.blockedOn[0]).toMatchObject({ reason: "paused" });
  });

  it("checks the liveness invariant from storage: an open workflow whose alarm is gone is unhealthy, and says why", async () => {
    const id = uniqueId("diag-no-alarm");
    await start({ name: "diag-no-alarm", steps: [sleepStep("nap", { durationMs: 3_600_000 })] }, { id });
    await runInDurableObject(schedulerStub(id), async (_instance, state) => state.storage.deleteAlarm());
    const { body } = await diagnosisOf(id);
    expect(body.healthy).toBe(false);
    expect(body.alarmAt).toBeNull();
    expect(body.problems).toEqual([expect.stringContaining("no alarm is set")]);
  });

  it("is 404 for an unknown workflow and for another tenant's", async () => {
    expect((await diagnosisOf(uniqueId("nobody"))).status).toBe(404);
    const theirs = await startAs("beta", { name: "theirs", steps: [sleepStep("nap", { durationMs: 60_000 })] });
    expect((await diagnosisOf(theirs)).status).toBe(404);
  });
});
