import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { getWorkflow, start, uniqueId, waitForStatus, waitForStep } from "../helpers/api";
import { indexRow } from "../helpers/index-db";
import { PATIENT } from "../helpers/policies";
import { watchSends } from "../helpers/queue";
import { json, mockRemote, REMOTE } from "../helpers/remote";
import { alarmOf, objectRecord, schedulerStub } from "../helpers/scheduler";
import { backdate, elapse, fireAlarm, runCron } from "../helpers/time";
import { INDEX_LEASE_MS } from "../../src/domain/machine/index-entry";

afterEach(() => vi.restoreAllMocks());

/** SWEEP_GRACE_MS is not set in the tests, so the sweep uses its default. */
const GRACE_MS = 60_000;
const SCHEDULE_TO_START_MS = 20_000;

/**
 * Runs the cron trigger and records which objects it woke; every other call goes through untouched. The
 * stubs are wrapped only while the cron runs (`runInDurableObject` needs unwrapped ones).
 */
async function cronWakes(scheduledTime: number): Promise<string[]> {
  const woken: string[] = [];
  const namespace = env.WORKFLOW_SCHEDULER;
  const getByName = namespace.getByName.bind(namespace);
  const spy = vi.spyOn(namespace, "getByName").mockImplementation((name: string) => {
    const stub = getByName(name);
    return new Proxy(stub, {
      get(target, property) {
        if (property !== "wake") return Reflect.get(target, property);
        return (...args: []) => {
          woken.push(name);
          return target.wake(...args);
        };
      },
    });
  });
  try {
    await runCron(scheduledTime);
  } finally {
    spy.mockRestore();
  }
  return woken;
}

const oneStep = (name: string, path: string, timeouts: Record<string, number> = {}) => ({
  name,
  defaults: { ...PATIENT, timeouts: { ...PATIENT.timeouts, scheduleToStartMs: SCHEDULE_TO_START_MS, ...timeouts } },
  steps: [{ id: "only", action: { type: "http", url: `${REMOTE}/${path}` } }],
});

/** A workflow whose first task message never reaches an agent; the test then takes its alarm away too. */
async function strandedWorkflow(name: string) {
  const id = uniqueId(name);
  watchSends((message) => message.workflowId === id && message.attempt === 1);
  await start(oneStep(name, "stranded"), { id });
  await vi.waitFor(async () => expect((await indexRow(id))?.next_deadline_at).toEqual(expect.any(Number)));
  return id;
}

describe("case 16: lost/stale alarm", () => {
  it("wakes an overdue open workflow whose alarm was deleted, after the grace period only, and no other; it is re-armed and completes", async () => {
    const remote = mockRemote((call) => (new URL(call.url).pathname === "/healthy" ? json({}, 202) : json({ ok: true })));
    const finished = uniqueId("finished");
    await start(oneStep("finished", "finished"), { id: finished });
    await waitForStatus(finished, "completed");
    const healthy = uniqueId("healthy");
    await start(oneStep("healthy", "healthy", { scheduleToStartMs: 60_000, heartbeatMs: 60_000, startToCloseMs: 60_000 }), { id: healthy });
    await waitForStep(healthy, "only", "waiting");
    const stranded = await strandedWorkflow("stranded");
    await runInDurableObject(schedulerStub(stranded), (_instance, state) => state.storage.deleteAlarm());

    // Past its deadline nothing moves it: no alarm, no agent. Its index lease lapses a lease after the start.
    await backdate(stranded, { ms: INDEX_LEASE_MS });
    const indexed = (await indexRow(stranded))!;
    expect(Date.now()).toBeGreaterThan(indexed.next_deadline_at!);
    expect((await getWorkflow(stranded)).steps[0].attempts).toHaveLength(1);
    expect(await alarmOf(stranded)).toBeNull();

    // A sweep within the grace period leaves it alone.
    expect(await cronWakes(Date.now())).not.toContain(`default:${stranded}`);
    expect(await alarmOf(stranded)).toBeNull();

    // Past the grace period the sweep wakes it, and only the overdue open workflows.
    const woken = await cronWakes(Date.now() + GRACE_MS + 1_000);
    expect(woken.filter((name) => name === `default:${stranded}`)).toHaveLength(1);
    expect(woken).not.toContain(`default:${healthy}`);
    expect(woken).not.toContain(`default:${finished}`);

    // Woken, it timed attempt 1 out and armed its alarm for the backoff: that alarm dispatched attempt 2.
    await elapse(stranded, PATIENT.retry.initialIntervalMs);
    const workflow = await waitForStatus(stranded, "completed");
    expect(workflow.steps[0].attempts.map((attempt: { status: string }) => attempt.status)).toEqual(["timed_out", "succeeded"]);
    expect(workflow.steps[0].attempts[0].error).toMatchObject({ timeout: "schedule_to_start" });
    expect(remote.requestsFor(`${stranded}:only`)).toBe(1);
    const object = await objectRecord(stranded);
    await vi.waitFor(async () => expect(await indexRow(stranded)).toMatchObject({ status: "completed", version: object.workflow!.version, next_deadline_at: null }));
    expect(object.alarmAt).toBeNull();
    // The healthy one was never touched by the sweep.
    expect((await getWorkflow(healthy)).steps[0]).toMatchObject({ status: "waiting", attempt: 1 });
  });

  it("replaces a stale alarm set far past the real deadline: the woken object arms its alarm at its next deadline again and supervision resumes", async () => {
    const remote = mockRemote(() => json({}, 202));
    const heartbeatMs = 60_000;
    const id = uniqueId("stale");
    watchSends((message) => message.workflowId === id && message.attempt === 1);
    await start(oneStep("stale", "stale", { heartbeatMs, startToCloseMs: 600_000 }), { id });
    await vi.waitFor(async () => expect((await indexRow(id))?.next_deadline_at).toEqual(expect.any(Number)));
    // The alarm is there but will not fire in time (a stale alarm, as after workerd#3138).
    const stale = Date.now() + 24 * 60 * 60 * 1_000;
    await runInDurableObject(schedulerStub(id), (_instance, state) => state.storage.setAlarm(stale));
    await backdate(id, { ms: INDEX_LEASE_MS });
    const indexedBefore = (await indexRow(id))!.next_deadline_at!;
    expect((await getWorkflow(id)).steps[0].attempts).toHaveLength(1);

    const woken = await cronWakes(Date.now() + GRACE_MS + 1_000);
    expect(woken.filter((name) => name === `default:${id}`)).toHaveLength(1);

    // The wake timed attempt 1 out and set the alarm for the backoff; that alarm, not the sweep, dispatched attempt 2.
    await elapse(id, PATIENT.retry.initialIntervalMs);
    const waiting = await waitForStep(id, "only", "waiting");
    expect(waiting.steps[0].attempts.map((attempt: { status: string }) => attempt.status)).toEqual(["timed_out", "waiting"]);
    expect(remote.requestsFor(`${id}:only`)).toBe(1);

    // Supervised again: the alarm set for attempt 2's schedule-to-start finds it claimed and nothing due, and
    // moves to the attempt's own deadline, long before the stale one.
    expect(await fireAlarm(id)).toBe(true);
    await vi.waitFor(async () => expect(await alarmOf(id)).toBe((await getWorkflow(id)).steps[0].lastHeartbeatAt + heartbeatMs));
    expect(await alarmOf(id)).toBeLessThan(stale);
    expect((await indexRow(id))!.next_deadline_at).toBeGreaterThan(indexedBefore);
    await schedulerStub(id).command({ command: "cancel", by: { actor: "operator" } });
  });
});
