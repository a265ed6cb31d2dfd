import { describe, expect, it } from "vitest";
import { cronProblem, nextFireAfter } from "../../src/domain/cron/cron";
import {
  createSchedule,
  fireDue,
  MAX_CATCHUP_FIRES,
  ON_TIME_SLACK_MS,
  pauseSchedule,
  RECENT_FIRES,
  resumeSchedule,
  startDeferred,
  startFinished,
  triggerFire,
  workflowEnded,
  workflowIdOf,
} from "../../src/domain/cron/machine";
import { ScheduleSpecSchema, type ScheduleSpecInput } from "../../src/domain/cron/spec";
import type { RecentFire, ScheduleState } from "../../src/domain/cron/state";

const SECOND = 1_000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
/** A fire of the every-five-minutes schedules below: Monday 2 March 2026, 09:00 UTC. */
const T0 = Date.parse("2026-03-02T09:00:00Z");
const EVERY_5_MIN = 5 * MINUTE;
const at = (iso: string) => Date.parse(iso);

/** An every-five-minutes schedule created just before T0, so its next fire is T0. */
function schedule(spec: Partial<ScheduleSpecInput> = {}, createdAt = T0 - 30 * SECOND): ScheduleState {
  return createSchedule("acme", { id: "nightly", cron: "*/5 * * * *", workflow: { definitionRef: { name: "report" } }, ...spec }, createdAt);
}

/** The schedule with some fields set, as an earlier transition would have left it. */
function given(spec: Partial<ScheduleSpecInput>, fields: Partial<ScheduleState> = {}): ScheduleState {
  return { ...schedule(spec), ...fields };
}

const started = (fireAt: number): RecentFire => ({ at: fireAt, workflowId: workflowIdOf({ id: "nightly" }, fireAt), outcome: "started" });
const outcome = (fireAt: number, fire: RecentFire["outcome"]): RecentFire => ({ at: fireAt, outcome: fire });
/** The fires of the every-five-minutes schedule from T0 + first periods to T0 + last periods, inclusive. */
const firesBetween = (first: number, last: number) => Array.from({ length: last - first + 1 }, (_, i) => T0 + (first + i) * EVERY_5_MIN);

interface Row {
  name: string;
  state: ScheduleState;
  /** The transition, at `now`. */
  apply: (state: ScheduleState) => ScheduleState;
  /** The fields of the result that must be so (`undefined` for a field that must be absent). */
  then: Partial<Record<keyof ScheduleState, unknown>>;
}

function check(row: Row): ScheduleState {
  const before = structuredClone(row.state);
  const result = row.apply(row.state);
  // Pure: the state handed in is never changed, whatever the transition does.
  expect(row.state).toEqual(before);
  for (const [field, value] of Object.entries(row.then)) {
    expect(result[field as keyof ScheduleState], field).toEqual(value);
  }
  return result;
}

describe("creating a schedule", () => {
  it("applies the defaults: UTC, overlap skip, no catch-up, running, its next fire strictly after now", () => {
    const state = createSchedule("acme", { id: "nightly", cron: "0 3 * * *", workflow: { definitionRef: { name: "report" } } }, T0);
    expect(state).toEqual({
      tenant: "acme",
      id: "nightly",
      cron: "0 3 * * *",
      timezone: "UTC",
      workflow: { definitionRef: { name: "report" } },
      overlap: "skip",
      catchupWindowMs: 0,
      paused: false,
      createdAt: T0,
      updatedAt: T0,
      nextFireAt: at("2026-03-03T03:00:00Z"),
      pendingStarts: [],
      recent: [],
    });
  });

  it("computes the next fire in the schedule's time zone", () => {
    const state = createSchedule("acme", { id: "daily", cron: "0 9 * * *", timezone: "America/New_York", workflow: { definitionRef: { name: "r" } } }, T0);
    expect(state.nextFireAt).toBe(at("2026-03-02T14:00:00Z"));
  });

  it("has no next fire when created paused", () => {
    const state = schedule({ paused: true });
    expect(state.paused).toBe(true);
    expect(state.nextFireAt).toBeUndefined();
  });

  it("starts each fire's workflow as <schedule id>:<fire time in ms>", () => {
    expect(workflowIdOf({ id: "nightly" }, T0)).toBe(`nightly:${T0}`);
  });
});

describe("the next fire", () => {
  it.each([
    ["*/5 * * * *", "UTC", T0, T0 + EVERY_5_MIN, "strictly after a fire time"],
    ["*/5 * * * *", "UTC", T0 - 1, T0, "at the fire time itself from a millisecond before"],
    ["*/30 * * * * *", "UTC", T0 + 1, T0 + 30 * SECOND, "with a sixth (seconds) field"],
    ["0 9 * * 1-5", "UTC", at("2026-03-06T10:00:00Z"), at("2026-03-09T09:00:00Z"), "over a weekend"],
    ["0 0 29 2 *", "UTC", T0, at("2028-02-29T00:00:00Z"), "on the next leap day"],
    ["0 9 * * *", "America/New_York", at("2026-01-15T00:00:00Z"), at("2026-01-15T14:00:00Z"), "in a time zone on standard time (UTC-5)"],
    ["0 9 * * *", "America/New_York", at("2026-07-15T00:00:00Z"), at("2026-07-15T13:00:00Z"), "in a time zone on summer time (UTC-4)"],
    ["0 9 * * *", "Asia/Kolkata", at("2026-07-15T00:00:00Z"), at("2026-07-15T03:30:00Z"), "in a time zone with a half-hour offset"],
  ])("%s in %s after %i is %i (%s)", (cron, timezone, after, expected) => {
    expect(nextFireAfter(cron, timezone, after)).toBe(expected);
  });
});

describe("daylight saving transitions, as croner defines them (pinned)", () => {
  const berlin230 = (after: string) => nextFireAfter("30 2 * * *", "Europe/Berlin", at(after));

  it("fires a 02:30 Europe/Berlin schedule at 03:00 CEST on the spring-forward day, when 02:30 does not exist", () => {
    // 2026-03-29: clocks go from 02:00 CET to 03:00 CEST; croner moves the missing 02:30 to 03:00 local.
    expect(berlin230("2026-03-28T12:00:00Z")).toBe(at("2026-03-29T01:00:00Z"));
    // ...and is back at 02:30 local (CEST, UTC+2) the day after.
    expect(berlin230("2026-03-29T01:00:00Z")).toBe(at("2026-03-30T00:30:00Z"));
  });

  it("fires a 02:30 Europe/Berlin schedule once on the fall-back day, at the first 02:30 (CEST)", () => {
    // 2026-10-25: 02:00–03:00 local happens twice (CEST, then CET); croner fires at the first and not at the second.
    expect(berlin230("2026-10-24T12:00:00Z")).toBe(at("2026-10-25T00:30:00Z"));
    expect(berlin230("2026-10-25T00:30:00Z")).toBe(at("2026-10-26T01:30:00Z"));
  });

  it("starts the spring-forward fire through the machine, then waits for the next day's 02:30", () => {
    const state = createSchedule("acme", { id: "berlin", cron: "30 2 * * *", timezone: "Europe/Berlin", workflow: { definitionRef: { name: "r" } } }, at("2026-03-28T12:00:00Z"));
    const fired = fireDue(state, at("2026-03-29T01:00:05Z"), false);
    expect(fired.pendingStarts).toEqual([at("2026-03-29T01:00:00Z")]);
    expect(fired.nextFireAt).toBe(at("2026-03-30T00:30:00Z"));
  });
});

describe("a cron expression or time zone that cannot be used", () => {
  it.each([
    ["*/5 * * * *", undefined],
    ["0 3 * * *", "Europe/Berlin"],
    ["*/30 * * * * *", "UTC"],
  ])("%s in %s is fine", (cron, timezone) => {
    expect(cronProblem(cron, timezone)).toBeUndefined();
  });

  it.each([
    ["nope", undefined, "cron", /"nope" does not parse/],
    ["* * * *", undefined, "cron", /does not parse/],
    ["61 * * * *", "UTC", "cron", /does not parse/],
    ["0 0 30 2 *", undefined, "cron", /never fires/],
    ["* * * * *", "Mars/Olympus", "timezone", /"Mars\/Olympus" is not an IANA time zone/],
    ["* * * * *", "CEST+2", "timezone", /not an IANA time zone/],
    ["nope", "Mars/Olympus", "cron", /does not parse/],
  ])("%s in %s names %s", (cron, timezone, field, message) => {
    const problem = cronProblem(cron, timezone);
    expect(problem?.field).toBe(field);
    expect(problem?.message).toMatch(message);
  });

  it.each([
    [{ cron: "nope" }, ["cron"]],
    [{ timezone: "Mars/Olympus" }, ["timezone"]],
  ])("is a validation issue at the field's path: %o", (change, path) => {
    const parsed = ScheduleSpecSchema.safeParse({ id: "s", cron: "* * * * *", workflow: { definitionRef: { name: "r" } }, ...change });
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues.map((issue) => issue.path)).toEqual([path]);
  });
});

describe("a fire that falls due", () => {
  const open = `nightly:${T0 - EVERY_5_MIN}`;
  const rows: (Row & { now?: number; previousOpen?: boolean })[] = [
    {
      name: "does nothing before the next fire",
      state: schedule(),
      apply: (s) => fireDue(s, T0 - 1, false),
      then: { nextFireAt: T0, pendingStarts: [], recent: [] },
    },
    {
      name: "does nothing while paused",
      state: schedule({ paused: true }),
      apply: (s) => fireDue(s, T0 + HOUR, false),
      then: { nextFireAt: undefined, pendingStarts: [], recent: [] },
    },
    {
      name: "starts when nothing is open, and moves the next fire on",
      state: schedule(),
      apply: (s) => fireDue(s, T0 + 2 * SECOND, false),
      then: { pendingStarts: [T0], nextFireAt: T0 + EVERY_5_MIN, recent: [], updatedAt: T0 + 2 * SECOND },
    },
    {
      name: "skip: is recorded as skipped while the previous workflow is open",
      state: given({ overlap: "skip" }, { open }),
      apply: (s) => fireDue(s, T0, true),
      then: { pendingStarts: [], open, recent: [outcome(T0, "skipped_overlap")], nextFireAt: T0 + EVERY_5_MIN },
    },
    {
      name: "skip: starts when the previous workflow has ended",
      state: given({ overlap: "skip" }, { open }),
      apply: (s) => fireDue(s, T0, false),
      then: { pendingStarts: [T0], recent: [] },
    },
    {
      name: "buffer_one: waits while the previous workflow is open",
      state: given({ overlap: "buffer_one" }, { open }),
      apply: (s) => fireDue(s, T0, true),
      then: { pendingStarts: [], buffered: T0, recent: [outcome(T0, "buffered")] },
    },
    {
      name: "buffer_one: a second fire while one waits is skipped, the first keeps its place",
      state: given({ overlap: "buffer_one" }, { open, buffered: T0 - EVERY_5_MIN / 2, recent: [outcome(T0 - EVERY_5_MIN / 2, "buffered")] }),
      apply: (s) => fireDue(s, T0, true),
      then: { pendingStarts: [], buffered: T0 - EVERY_5_MIN / 2, recent: [outcome(T0 - EVERY_5_MIN / 2, "buffered"), outcome(T0, "skipped_overlap")] },
    },
    {
      name: "skip: a fire due while a start is still pending is skipped, as with an open workflow",
      state: given({ overlap: "skip" }, { pendingStarts: [T0 - MINUTE] }),
      apply: (s) => fireDue(s, T0, false),
      then: { pendingStarts: [T0 - MINUTE], recent: [outcome(T0, "skipped_overlap")] },
    },
    {
      name: "buffer_one: a fire due while the buffered fire is about to start is buffered, not started alongside it",
      // The open workflow has just ended (found at this alarm): its buffered fire is the pending start.
      state: workflowEnded(given({ overlap: "buffer_one" }, { open, buffered: T0 - EVERY_5_MIN / 2 }), open, T0),
      apply: (s) => fireDue(s, T0, false),
      then: { pendingStarts: [T0 - EVERY_5_MIN / 2], buffered: T0, recent: [outcome(T0, "buffered")] },
    },
    {
      name: "cancel_previous: cancels the open workflow and starts",
      state: given({ overlap: "cancel_previous" }, { open }),
      apply: (s) => fireDue(s, T0, true),
      then: { pendingCancel: open, pendingStarts: [T0], recent: [] },
    },
    {
      name: "cancel_previous: only starts when the previous workflow has ended",
      state: given({ overlap: "cancel_previous" }, { open }),
      apply: (s) => fireDue(s, T0, false),
      then: { pendingCancel: undefined, pendingStarts: [T0] },
    },
    {
      name: "allow: starts while the previous workflow is open",
      state: given({ overlap: "allow" }, { open }),
      apply: (s) => fireDue(s, T0, true),
      then: { pendingStarts: [T0], pendingCancel: undefined, recent: [] },
    },
  ];

  it.each(rows)("$name", (row) => {
    check(row);
  });

  it("is left as it was, the same object, when nothing is due", () => {
    const state = schedule();
    expect(fireDue(state, T0 - 1, false)).toBe(state);
  });
});

describe("catching up after downtime", () => {
  /** The alarm runs a second after the fire 30 periods after T0: 31 fires (T0 … T0+150 min) are due. */
  const now = T0 + 30 * EVERY_5_MIN + SECOND;
  const rows: Row[] = [
    {
      name: "runs every fire of a short outage within the window, oldest first",
      state: schedule({ overlap: "allow", catchupWindowMs: HOUR }),
      apply: (s) => fireDue(s, T0 + 2 * EVERY_5_MIN + SECOND, false),
      then: { pendingStarts: firesBetween(0, 2), recent: [], nextFireAt: T0 + 3 * EVERY_5_MIN },
    },
    {
      name: "runs the newest 10 of the fires within the window and records the older ones as missed",
      state: schedule({ overlap: "allow", catchupWindowMs: DAY }),
      apply: (s) => fireDue(s, now, false),
      then: {
        pendingStarts: firesBetween(21, 30),
        recent: firesBetween(0, 20).map((fire) => outcome(fire, "missed")).slice(-RECENT_FIRES),
        nextFireAt: T0 + 31 * EVERY_5_MIN,
      },
    },
    {
      name: "runs the fires within the window (plus the on-time slack), the older ones are missed",
      // 30 min + 1 min of slack before `now` reaches back to T0 + 119 min: the fires at 120 … 150 min run.
      state: schedule({ overlap: "allow", catchupWindowMs: 30 * MINUTE }),
      apply: (s) => fireDue(s, now, false),
      then: { pendingStarts: firesBetween(24, 30), recent: firesBetween(4, 23).map((fire) => outcome(fire, "missed")) },
    },
    {
      name: "with no window, runs only the fire that is on time and records the others as missed",
      state: schedule({ overlap: "allow" }),
      apply: (s) => fireDue(s, now, false),
      then: { pendingStarts: [T0 + 30 * EVERY_5_MIN], recent: firesBetween(10, 29).map((fire) => outcome(fire, "missed")) },
    },
    {
      name: "under skip, starts the oldest fire in the window and skips the rest, as it would have done live",
      state: schedule({ overlap: "skip", catchupWindowMs: 12 * MINUTE }),
      // The window (12 + 1 min) holds the fires at 140, 145 and 150 min; 135 min and older are missed.
      apply: (s) => fireDue(s, now, false),
      then: {
        pendingStarts: [T0 + 28 * EVERY_5_MIN],
        recent: [...firesBetween(10, 27).map((fire) => outcome(fire, "missed")), outcome(T0 + 29 * EVERY_5_MIN, "skipped_overlap"), outcome(T0 + 30 * EVERY_5_MIN, "skipped_overlap")],
      },
    },
    {
      name: "does not catch up the fires of an outage longer than the 1,000 it lists: the newest in the window still run",
      // Every minute, down for two days: 2,880 fires are due, and the newest ten (all in the hour's window) run.
      state: schedule({ cron: "* * * * *", overlap: "allow", catchupWindowMs: HOUR }, T0 - 30 * SECOND),
      apply: (s) => fireDue(s, T0 + 2 * DAY + SECOND, false),
      then: { pendingStarts: Array.from({ length: 10 }, (_, i) => T0 + 2 * DAY - (9 - i) * MINUTE), nextFireAt: T0 + 2 * DAY + MINUTE },
    },
  ];

  it.each(rows)("$name", (row) => {
    const result = check(row);
    expect(result.pendingStarts.length).toBeLessThanOrEqual(MAX_CATCHUP_FIRES);
    expect(result.recent.length).toBeLessThanOrEqual(RECENT_FIRES);
  });

  it.each([
    [ON_TIME_SLACK_MS - 1, [T0], []],
    [ON_TIME_SLACK_MS, [T0], []],
    [ON_TIME_SLACK_MS + 1, [], [outcome(T0, "missed")]],
  ])("with catchupWindowMs 0, a fire the alarm reaches %i ms late starts only within the on-time slack", (late, pendingStarts, recent) => {
    const result = fireDue(schedule(), T0 + late, false);
    expect(result.pendingStarts).toEqual(pendingStarts);
    expect(result.recent).toEqual(recent);
    expect(result.nextFireAt).toBe(T0 + EVERY_5_MIN);
  });
});

describe("after a fire", () => {
  const id = `nightly:${T0}`;
  const rows: Row[] = [
    {
      name: "a start that was made is recorded and its workflow is the open one",
      state: given({}, { pendingStarts: [T0], nextFireAt: T0 + EVERY_5_MIN }),
      apply: (s) => startFinished(s, T0, { ok: true }, T0 + SECOND),
      then: { pendingStarts: [], open: id, recent: [started(T0)], nextFireAt: T0 + EVERY_5_MIN, updatedAt: T0 + SECOND },
    },
    {
      name: "a start that failed is recorded with its error, and the next fire is kept",
      state: given({}, { pendingStarts: [T0], nextFireAt: T0 + EVERY_5_MIN, open: "nightly:1" }),
      apply: (s) => startFinished(s, T0, { ok: false, error: "not_found: definition \"report\" not found" }, T0 + SECOND),
      then: {
        pendingStarts: [],
        open: "nightly:1",
        recent: [{ at: T0, workflowId: id, outcome: "failed", error: 'not_found: definition "report" not found' }],
        nextFireAt: T0 + EVERY_5_MIN,
      },
    },
    {
      name: "a failure's error is cut to 500 characters",
      state: given({}, { pendingStarts: [T0] }),
      apply: (s) => startFinished(s, T0, { ok: false, error: "x".repeat(2_000) }, T0),
      then: { recent: [{ at: T0, workflowId: id, outcome: "failed", error: "x".repeat(500) }] },
    },
    {
      name: "a start deferred by back-pressure stays pending, is recorded as delayed once, and sets when to try again",
      state: given({}, { pendingStarts: [T0], nextFireAt: T0 + EVERY_5_MIN }),
      apply: (s) => startDeferred(startDeferred(s, T0, { reason: "overloaded", retryAt: T0 + 5 * SECOND }, T0 + SECOND), T0, { reason: "overloaded again", retryAt: T0 + 20 * SECOND }, T0 + 5 * SECOND),
      then: { pendingStarts: [T0], deferredUntil: T0 + 20 * SECOND, recent: [{ at: T0, workflowId: id, outcome: "delayed", error: "overloaded again", delays: 2 }], nextFireAt: T0 + EVERY_5_MIN },
    },
    {
      name: "a delayed start that is made replaces its delayed record, keeping the count, and ends the deferral",
      state: given({}, { pendingStarts: [T0], deferredUntil: T0 + 5 * SECOND, recent: [outcome(T0 - EVERY_5_MIN, "missed"), { at: T0, workflowId: id, outcome: "delayed", error: "overloaded", delays: 3 }] }),
      apply: (s) => startFinished(s, T0, { ok: true }, T0 + 6 * SECOND),
      then: { pendingStarts: [], deferredUntil: undefined, recent: [outcome(T0 - EVERY_5_MIN, "missed"), { ...started(T0), delays: 3 }], open: id },
    },
    {
      name: "only the finished start leaves the pending ones",
      state: given({ overlap: "allow" }, { pendingStarts: [T0, T0 + EVERY_5_MIN] }),
      apply: (s) => startFinished(s, T0, { ok: true }, T0),
      then: { pendingStarts: [T0 + EVERY_5_MIN], open: id },
    },
    {
      name: "the open workflow's end starts the buffered fire",
      state: given({ overlap: "buffer_one" }, { open: "nightly:1", buffered: T0 }),
      apply: (s) => workflowEnded(s, "nightly:1", T0 + MINUTE),
      then: { open: undefined, buffered: undefined, pendingStarts: [T0], updatedAt: T0 + MINUTE },
    },
    {
      name: "the open workflow's end with nothing buffered only closes it",
      state: given({ overlap: "buffer_one" }, { open: "nightly:1" }),
      apply: (s) => workflowEnded(s, "nightly:1", T0),
      then: { open: undefined, buffered: undefined, pendingStarts: [] },
    },
    {
      name: "the end of an older workflow than the open one changes nothing",
      state: given({ overlap: "buffer_one" }, { open: "nightly:2", buffered: T0 }),
      apply: (s) => workflowEnded(s, "nightly:1", T0),
      then: { open: "nightly:2", buffered: T0, pendingStarts: [] },
    },
  ];

  it.each(rows)("$name", (row) => {
    check(row);
  });

  it("keeps the 20 newest fires in recent, newest last", () => {
    const recent = Array.from({ length: RECENT_FIRES }, (_, i) => outcome(T0 - (RECENT_FIRES - i) * EVERY_5_MIN, "missed"));
    const result = startFinished(given({}, { pendingStarts: [T0], recent }), T0, { ok: true }, T0);
    expect(RECENT_FIRES).toBe(20);
    expect(result.recent).toHaveLength(20);
    expect(result.recent[0]).toEqual(recent[1]);
    expect(result.recent.at(-1)).toEqual(started(T0));
  });
});

describe("pause, resume and trigger", () => {
  const later = T0 + 3 * HOUR + 2 * MINUTE;
  const rows: Row[] = [
    {
      name: "pause clears the next fire",
      state: schedule(),
      apply: (s) => pauseSchedule(s, T0 - SECOND),
      then: { paused: true, nextFireAt: undefined, updatedAt: T0 - SECOND },
    },
    {
      name: "resume computes the next fire from now and records nothing for the fires of the pause",
      state: pauseSchedule(schedule(), T0 - SECOND),
      apply: (s) => resumeSchedule(s, later),
      then: { paused: false, nextFireAt: T0 + 3 * HOUR + EVERY_5_MIN, recent: [], pendingStarts: [], updatedAt: later },
    },
    {
      name: "trigger starts now, outside the cron, and keeps the next fire",
      state: schedule(),
      apply: (s) => triggerFire(s, T0 - 10 * SECOND, false),
      then: { pendingStarts: [T0 - 10 * SECOND], nextFireAt: T0 },
    },
    {
      name: "trigger follows the overlap policy: skipped while the previous workflow is open",
      state: given({ overlap: "skip" }, { open: "nightly:1" }),
      apply: (s) => triggerFire(s, T0 - 10 * SECOND, true),
      then: { pendingStarts: [], recent: [outcome(T0 - 10 * SECOND, "skipped_overlap")], nextFireAt: T0 },
    },
    {
      name: "trigger counts a start still pending as open",
      state: given({ overlap: "buffer_one" }, { pendingStarts: [T0 - MINUTE] }),
      apply: (s) => triggerFire(s, T0 - 10 * SECOND, false),
      then: { pendingStarts: [T0 - MINUTE], buffered: T0 - 10 * SECOND, recent: [outcome(T0 - 10 * SECOND, "buffered")] },
    },
    {
      name: "trigger works on a paused schedule and leaves it paused",
      state: schedule({ paused: true }),
      apply: (s) => triggerFire(s, T0, false),
      then: { pendingStarts: [T0], paused: true, nextFireAt: undefined },
    },
  ];

  it.each(rows)("$name", (row) => {
    check(row);
  });

  it("pausing a paused schedule and resuming a running one change nothing", () => {
    const paused = pauseSchedule(schedule(), T0);
    expect(pauseSchedule(paused, T0 + HOUR)).toBe(paused);
    const running = schedule();
    expect(resumeSchedule(running, T0 + HOUR)).toBe(running);
  });

  it("a paused schedule resumed just before a fire fires at it, not a period later", () => {
    const resumed = resumeSchedule(pauseSchedule(schedule(), T0 - HOUR), T0 - SECOND);
    expect(resumed.nextFireAt).toBe(T0);
  });
});

describe("cancel_previous after an outage", () => {
  it("starts only the newest of the fires caught up at once, so one workflow runs; the others are skipped", () => {
    const minute = 60_000;
    const t0 = Date.UTC(2026, 0, 1, 12, 0, 0);
    const state = createSchedule(
      "acme",
      { id: "s", cron: "* * * * *", overlap: "cancel_previous", catchupWindowMs: 10 * minute, workflow: { definitionRef: { name: "d" } } },
      t0,
    );
    const after = fireDue({ ...state, open: "s:1" }, t0 + 3 * minute + 5_000, true);
    expect(after.pendingStarts).toEqual([t0 + 3 * minute]);
    expect(after.pendingCancel).toBe("s:1");
    expect(after.recent.map((fire) => [fire.at - t0, fire.outcome])).toEqual([
      [minute, "skipped_overlap"],
      [2 * minute, "skipped_overlap"],
    ]);
  });
});
