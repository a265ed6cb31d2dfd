import { runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { api, bearer, getWorkflow, historyOf, uniqueId, waitForStatus } from "../helpers/api";
import {
  createSchedule,
  dailySpec,
  fireAt,
  fireOnTime,
  getSchedule,
  recentOf,
  rewriteSchedule,
  runScheduleAlarm,
  scheduleAction,
  scheduleAlarm,
  scheduleStub,
  storedSchedule,
  waitingDefinition,
} from "../helpers/schedules";
import { publishNew } from "../helpers/registry";
import { control, DAY, sendEvent } from "../helpers/workflow-language";
import { objectRecord, schedulerStub } from "../helpers/scheduler";
import { backdate, fireAlarm } from "../helpers/time";

afterEach(() => vi.restoreAllMocks());

/** A schedule that fires daily at the second before now; each fire starts a workflow that waits for `done`. */
async function scheduled(extra: Record<string, unknown> = {}) {
  const { spec, fireAt: today } = dailySpec(uniqueId("sched"), extra);
  const created = await createSchedule(spec);
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return { id: spec.id, today };
}

const workflowOf = (scheduleId: string, at: number) => `${scheduleId}:${at}`;

/** How often a workflow was started: its `workflow_started` events. */
async function startsOf(workflowId: string): Promise<number> {
  return (await historyOf(workflowId)).filter((event) => event.type === "workflow_started").length;
}

describe("a fire", () => {
  it("starts the workflow <schedule id>:<fire time> with the schedule's input, and moves the alarm to the next fire", async () => {
    const { id, today } = await scheduled({ workflow: { definition: { name: "report", steps: [{ id: "hold", waitForEvent: { event: "done", timeoutMs: DAY } }] }, input: { region: "eu" } } });

    const fired = await fireOnTime(id);

    expect(fired).toBe(today);
    const workflow = await getWorkflow(workflowOf(id, today));
    expect(workflow).toMatchObject({ id: `${id}:${today}`, name: "report", status: "running", input: { region: "eu" } });
    const schedule = (await getSchedule(id)).body;
    expect(schedule.recent).toEqual([{ at: today, workflowId: workflowOf(id, today), outcome: "started" }]);
    expect(schedule.nextFireAt).toBe(today + DAY);
    expect(await scheduleAlarm(id)).toBe(today + DAY);
    // The workflow is the schedule's tenant's, like one it had started itself.
    expect((await api("GET", `/v1/workflows/${workflowOf(id, today)}`, undefined, { headers: bearer("beta") })).status).toBe(404);
  });

  it("starts one workflow when the alarm runs twice", async () => {
    const { id, today } = await scheduled();
    await fireOnTime(id);

    // The runtime retries an alarm; nothing more is due, so nothing more is started.
    expect(await runScheduleAlarm(id)).toBe(true);

    expect(await recentOf(id)).toEqual([{ at: today, workflowId: workflowOf(id, today), outcome: "started" }]);
    expect(await startsOf(workflowOf(id, today))).toBe(1);
  });

  it("starts one workflow when the object was reset after the start and before it stored that (the fire runs again)", async () => {
    const { id, today } = await scheduled();
    const before = (await storedSchedule(id))!.state;
    await fireOnTime(id);
    const first = await getWorkflow(workflowOf(id, today));

    // As if the object had died right after the start: what it stored since is lost, the fire is due again.
    await rewriteSchedule(id, () => ({ ...before, nextFireAt: today }));
    expect(await runScheduleAlarm(id)).toBe(true);

    expect(await recentOf(id)).toEqual([{ at: today, workflowId: workflowOf(id, today), outcome: "started" }]);
    expect(await startsOf(workflowOf(id, today))).toBe(1);
    expect((await getWorkflow(workflowOf(id, today))).createdAt).toBe(first.createdAt);
  });

  it("makes a start it had stored as pending but not made (or not recorded) once, on its next alarm", async () => {
    const { id, today } = await scheduled();
    await fireOnTime(id);
    // Stored between the decision and the start's outcome: the start is pending, the fire's outcome not recorded.
    await rewriteSchedule(id, (state) => ({ ...state, pendingStarts: [today], recent: [], open: undefined }));

    expect(await runScheduleAlarm(id)).toBe(true);

    const stored = (await storedSchedule(id))!.state;
    expect(stored.pendingStarts).toEqual([]);
    expect(stored.open).toBe(workflowOf(id, today));
    expect(stored.recent).toEqual([{ at: today, workflowId: workflowOf(id, today), outcome: "started" }]);
    expect(await startsOf(workflowOf(id, today))).toBe(1);
  });

  it("of a definition that does not resolve is recorded as failed, and the next fire is kept", async () => {
    const name = uniqueId("report");
    await publishNew(waitingDefinition(name), 1);
    const { id, today } = await scheduled({ workflow: { definitionRef: { name } } });
    // Checked when the schedule was created; should the reference stop resolving since (a registry row lost),
    // the fire's start is refused.
    await rewriteSchedule(id, (state) => ({ ...state, workflow: { definitionRef: { name: `${name}-gone` } } }));

    await fireOnTime(id);

    const schedule = (await getSchedule(id)).body;
    expect(schedule.recent).toEqual([{ at: today, workflowId: workflowOf(id, today), outcome: "failed", error: expect.stringMatching(/^not_found: .*definitionRef/) }]);
    expect(schedule.nextFireAt).toBe(today + DAY);
    expect(await scheduleAlarm(id)).toBe(today + DAY);
    expect((await api("GET", `/v1/workflows/${workflowOf(id, today)}`)).status).toBe(404);
    expect((await storedSchedule(id))!.state.pendingStarts).toEqual([]);
  });
});

describe("overlap", () => {
  it("skip: a fire while the previous workflow is still running is recorded as skipped_overlap and starts nothing", async () => {
    const { id } = await scheduled({ overlap: "skip" });
    const first = await fireAt(id);

    const second = await fireAt(id);

    expect(await recentOf(id)).toEqual([
      { at: first, workflowId: workflowOf(id, first), outcome: "started" },
      { at: second, outcome: "skipped_overlap" },
    ]);
    expect((await getWorkflow(workflowOf(id, first))).status).toBe("running");
    expect((await api("GET", `/v1/workflows/${workflowOf(id, second)}`)).status).toBe(404);
  });

  it("skip: the next fire after the previous workflow ended starts again", async () => {
    const { id } = await scheduled({ overlap: "skip" });
    const first = await fireAt(id);
    expect((await sendEvent(workflowOf(id, first), { event: "done" })).status).toBe(202);
    await waitForStatus(workflowOf(id, first), "completed");

    const second = await fireAt(id);

    expect((await recentOf(id)).map((fire) => fire.outcome)).toEqual(["started", "started"]);
    expect((await getWorkflow(workflowOf(id, second))).status).toBe("running");
  });

  it("buffer_one: keeps one fire waiting, skips a second, and starts the waiting one after the open workflow ends", async () => {
    const { id } = await scheduled({ overlap: "buffer_one" });
    const first = await fireAt(id);
    const waiting = await fireAt(id);
    const third = await fireAt(id);
    expect(await recentOf(id)).toEqual([
      { at: first, workflowId: workflowOf(id, first), outcome: "started" },
      { at: waiting, outcome: "buffered" },
      { at: third, outcome: "skipped_overlap" },
    ]);
    expect((await api("GET", `/v1/workflows/${workflowOf(id, waiting)}`)).status).toBe(404);

    expect((await control(workflowOf(id, first), "terminate", { reason: "done by hand" })).status).toBe(202);
    // The schedule finds the open workflow ended at its next alarm (or sooner, when the workflow tells it).
    await runScheduleAlarm(id);

    expect((await getWorkflow(workflowOf(id, waiting))).status).toBe("running");
    const recent = await recentOf(id);
    expect(recent.at(-1)).toEqual({ at: waiting, workflowId: workflowOf(id, waiting), outcome: "started" });
    const stored = (await storedSchedule(id))!.state;
    expect(stored.buffered).toBeUndefined();
    expect(stored.open).toBe(workflowOf(id, waiting));
    expect((await api("GET", `/v1/workflows/${workflowOf(id, third)}`)).status).toBe(404);
  });

  it("buffer_one: a fire that comes due as the waiting one starts takes its place, and does not start alongside it", async () => {
    const { id } = await scheduled({ overlap: "buffer_one" });
    const first = await fireAt(id);
    const waiting = await fireAt(id);
    expect((await control(workflowOf(id, first), "terminate")).status).toBe(202);

    // The schedule learns of the end at its next fire: the waiting fire starts, the new one waits in turn.
    const next = await fireAt(id);

    expect((await getWorkflow(workflowOf(id, waiting))).status).toBe("running");
    expect((await api("GET", `/v1/workflows/${workflowOf(id, next)}`)).status).toBe(404);
    const recent = await recentOf(id);
    expect(recent).toContainEqual({ at: waiting, workflowId: workflowOf(id, waiting), outcome: "started" });
    expect(recent).toContainEqual({ at: next, outcome: "buffered" });
    expect((await storedSchedule(id))!.state).toMatchObject({ open: workflowOf(id, waiting), buffered: next, pendingStarts: [] });
  });

  it("buffer_one: the open workflow's end starts the waiting fire without waiting for the schedule's next alarm", async () => {
    const { id } = await scheduled({ overlap: "buffer_one" });
    const first = await fireAt(id);
    const waiting = await fireAt(id);

    expect((await sendEvent(workflowOf(id, first), { event: "done" })).status).toBe(202);
    await waitForStatus(workflowOf(id, first), "completed");

    // No alarm of the schedule is run here: the workflow's end is what starts the buffered fire.
    await vi.waitFor(async () => expect((await api("GET", `/v1/workflows/${workflowOf(id, waiting)}`)).status).toBe(200), { timeout: 2_000, interval: 50 });
    expect((await recentOf(id)).at(-1)).toEqual({ at: waiting, workflowId: workflowOf(id, waiting), outcome: "started" });
  });

  it("buffer_one: a notice of the end that failed is sent again by the workflow's alarm, which then starts the waiting fire", async () => {
    const { id } = await scheduled({ overlap: "buffer_one" });
    const first = await fireAt(id);
    const waiting = await fireAt(id);
    // The first notice cannot reach the schedule's object.
    await runInDurableObject(schedulerStub(workflowOf(id, first)), (instance) => {
      const schedules = (instance as unknown as { env: Env }).env.SCHEDULES;
      vi.spyOn(schedules, "getByName").mockImplementationOnce(() => {
        throw new Error("schedule unreachable");
      });
    });

    expect((await sendEvent(workflowOf(id, first), { event: "done" })).status).toBe(202);
    await waitForStatus(workflowOf(id, first), "completed");
    const notices = async () => (await objectRecord(workflowOf(id, first))).outbox?.filter((row) => row.kind === "schedule") ?? [];
    await vi.waitFor(async () => expect(await notices()).toMatchObject([{ attempts: 1 }]), { timeout: 2_000, interval: 50 });
    expect((await api("GET", `/v1/workflows/${workflowOf(id, waiting)}`)).status).toBe(404);

    // Past the notice's backoff, the workflow's alarm tells the schedule, and the waiting fire starts.
    await backdate(workflowOf(id, first), { ms: 60_000 });
    await fireAlarm(workflowOf(id, first));
    expect(await notices()).toEqual([]);
    await vi.waitFor(async () => expect((await api("GET", `/v1/workflows/${workflowOf(id, waiting)}`)).status).toBe(200), { timeout: 2_000, interval: 50 });
  });

  it("cancel_previous: cancels the open workflow, then starts", async () => {
    const { id } = await scheduled({ overlap: "cancel_previous" });
    const first = await fireAt(id);

    const second = await fireAt(id);

    expect((await getWorkflow(workflowOf(id, first))).status).toBe("cancelled");
    expect((await getWorkflow(workflowOf(id, second))).status).toBe("running");
    // The schedule acted, not a token: the cancelled workflow's history names it.
    const cancel = (await historyOf(workflowOf(id, first))).find((event) => event.type === "operator_action");
    expect(cancel?.data).toEqual({ action: "cancel", actor: `schedule:${id}`, reason: "overlap policy cancel_previous: a new fire is due" });
    expect(await recentOf(id)).toEqual([
      { at: first, workflowId: workflowOf(id, first), outcome: "started" },
      { at: second, workflowId: workflowOf(id, second), outcome: "started" },
    ]);
    const stored = (await storedSchedule(id))!.state;
    expect(stored.pendingCancel).toBeUndefined();
    expect(stored.open).toBe(workflowOf(id, second));
  });

  it("allow: starts while the previous workflow runs", async () => {
    const { id } = await scheduled({ overlap: "allow" });
    const first = await fireAt(id);

    const second = await fireAt(id);

    expect((await getWorkflow(workflowOf(id, first))).status).toBe("running");
    expect((await getWorkflow(workflowOf(id, second))).status).toBe("running");
    expect((await recentOf(id)).map((fire) => fire.outcome)).toEqual(["started", "started"]);
  });
});

describe("catch-up after downtime", () => {
  it("runs the newest 10 fires missed within the window and records the older ones as missed", async () => {
    const { id, today } = await scheduled({ overlap: "allow", catchupWindowMs: 30 * DAY });
    // Down for 15 days: the alarm runs as if the last 15 daily fires (today's included) had all come due.
    await rewriteSchedule(id, (state) => ({ ...state, nextFireAt: state.nextFireAt! - 15 * DAY }));

    expect(await runScheduleAlarm(id)).toBe(true);

    const fires = Array.from({ length: 15 }, (_, i) => today - (14 - i) * DAY);
    const [missed, ran] = [fires.slice(0, 5), fires.slice(5)];
    const recent = await recentOf(id);
    expect(recent.filter((fire) => fire.outcome === "missed").map((fire) => fire.at)).toEqual(missed);
    expect(recent.filter((fire) => fire.outcome === "started").map((fire) => fire.at)).toEqual(ran);
    for (const at of ran) expect((await getWorkflow(workflowOf(id, at))).status).toBe("running");
    for (const at of missed) expect((await api("GET", `/v1/workflows/${workflowOf(id, at)}`)).status).toBe(404);
    expect((await getSchedule(id)).body.nextFireAt).toBe(today + DAY);
  });

  it("records fires older than the window as missed and runs only those within it", async () => {
    const { id, today } = await scheduled({ overlap: "allow", catchupWindowMs: 2 * DAY });
    await rewriteSchedule(id, (state) => ({ ...state, nextFireAt: state.nextFireAt! - 6 * DAY }));

    expect(await runScheduleAlarm(id)).toBe(true);

    expect((await recentOf(id)).map((fire) => [fire.at, fire.outcome])).toEqual([
      [today - 5 * DAY, "missed"],
      [today - 4 * DAY, "missed"],
      [today - 3 * DAY, "missed"],
      [today - 2 * DAY, "started"],
      [today - DAY, "started"],
      [today, "started"],
    ]);
  });

  it("with no window, runs only the fire that is on time", async () => {
    const { id, today } = await scheduled({ overlap: "allow" });
    await rewriteSchedule(id, (state) => ({ ...state, nextFireAt: state.nextFireAt! - 3 * DAY }));

    expect(await runScheduleAlarm(id)).toBe(true);

    expect((await recentOf(id)).map((fire) => [fire.at, fire.outcome])).toEqual([
      [today - 2 * DAY, "missed"],
      [today - DAY, "missed"],
      [today, "started"],
    ]);
  });
});

describe("pause, resume and trigger", () => {
  it("pause deletes the alarm and stops fires; resume computes the next fire from now, catching up nothing", async () => {
    const { id } = await scheduled({ cron: "* * * * *" });

    const paused = await scheduleAction(id, "pause");

    expect(paused.status).toBe(200);
    expect(paused.body).toMatchObject({ paused: true, nextFireAt: null });
    expect(await scheduleAlarm(id)).toBeNull();
    expect(await runScheduleAlarm(id)).toBe(false);
    // Pausing again is a no-op.
    expect((await scheduleAction(id, "pause")).body).toMatchObject({ paused: true, nextFireAt: null });

    const before = Date.now();
    const resumed = await scheduleAction(id, "resume");

    expect(resumed.status).toBe(200);
    expect(resumed.body.paused).toBe(false);
    expect(resumed.body.nextFireAt).toBeGreaterThan(before - 1_000);
    expect(resumed.body.nextFireAt).toBeLessThanOrEqual(Date.now() + 60_000);
    expect(resumed.body.nextFireAt % 60_000).toBe(0);
    expect(resumed.body.recent).toEqual([]);
    expect(await scheduleAlarm(id)).toBe(resumed.body.nextFireAt);
  });

  it("a paused schedule does not fire even when its old alarm runs", async () => {
    const { id } = await scheduled();
    await scheduleAction(id, "pause");
    // An alarm left over from before the pause (set again by hand: pause deleted it).
    await runInDurableObject(scheduleStub(id), (_instance, state) => state.storage.setAlarm(Date.now()));

    expect(await runScheduleAlarm(id)).toBe(true);

    expect(await recentOf(id)).toEqual([]);
    expect((await storedSchedule(id))!.state.pendingStarts).toEqual([]);
  });

  it("trigger fires now, outside the cron, and keeps the next fire", async () => {
    const { id, today } = await scheduled();
    const before = Date.now();

    const triggered = await scheduleAction(id, "trigger");

    expect(triggered.status).toBe(200);
    const [fire] = triggered.body.recent;
    expect(triggered.body.recent).toHaveLength(1);
    expect(fire).toMatchObject({ outcome: "started", workflowId: `${id}:${fire.at}` });
    expect(fire.at).toBeGreaterThanOrEqual(before);
    expect(triggered.body.nextFireAt).toBe(today + DAY);
    expect((await getWorkflow(fire.workflowId)).status).toBe("running");
  });

  it("trigger follows the overlap policy: skipped while the previous workflow runs", async () => {
    const { id } = await scheduled({ overlap: "skip" });
    await fireAt(id);

    const triggered = await scheduleAction(id, "trigger");

    expect(triggered.status).toBe(200);
    expect(triggered.body.recent.map((fire: { outcome: string }) => fire.outcome)).toEqual(["started", "skipped_overlap"]);
  });
});
