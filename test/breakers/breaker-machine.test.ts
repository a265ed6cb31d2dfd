import { describe, expect, it } from "vitest";
import {
  admit,
  newBreaker,
  nextAlarmAt,
  onAlarm,
  probeNotTaken,
  recordFailure,
  recordSuccess,
  RELEASE,
  type BreakerState,
} from "../../src/domain/breaker/machine";
import { DEFAULT_BREAKER, MAX_OPEN_MS } from "../../src/domain/breaker/settings";

const T0 = 1_700_000_000_000;
const SETTINGS = DEFAULT_BREAKER;
const A = { workflowId: "wf-a", stepId: "s" };
const B = { workflowId: "wf-b", stepId: "s" };

const closed = (fields: Partial<BreakerState> = {}): BreakerState => ({ ...newBreaker("acme", "api.example", SETTINGS, T0), ...fields });
const open = (fields: Partial<BreakerState> = {}): BreakerState => closed({ state: "open", failures: 5, openUntil: T0 + 30_000, ...fields });
const halfOpen = (fields: Partial<BreakerState> = {}): BreakerState => closed({ state: "half_open", failures: 5, openUntil: T0, ...fields });

describe("failures", () => {
  it.each([
    { name: "counts a failure of a closed breaker below the threshold", before: closed({ failures: 3 }), expected: { state: "closed", failures: 4 }, openedNow: false },
    { name: "opens at the threshold-th failure in a row, for openMs", before: closed({ failures: 4 }), expected: { state: "open", failures: 5, openMs: 30_000, openUntil: T0 + 30_000 }, openedNow: true },
    { name: "counts failures while open without moving openUntil", before: open(), expected: { state: "open", failures: 6, openUntil: T0 + 30_000 }, openedNow: false },
    {
      name: "re-opens a half-open breaker (the probe failed) for twice as long",
      before: halfOpen({ probe: { ...A, since: T0 } }),
      expected: { state: "open", failures: 6, openMs: 60_000, openUntil: T0 + 60_000 },
      openedNow: true,
    },
    { name: "doubles no further than MAX_OPEN_MS", before: halfOpen({ openMs: 200_000 }), expected: { state: "open", openMs: MAX_OPEN_MS, openUntil: T0 + MAX_OPEN_MS }, openedNow: true },
  ])("$name", ({ before, expected, openedNow }) => {
    const result = recordFailure(before, SETTINGS, T0);
    expect(result.breaker).toMatchObject(expected);
    // An open breaker has no probe out.
    if (result.breaker.state === "open") expect(result.breaker.probe).toBeUndefined();
    expect(result.openedNow).toBe(openedNow);
  });

  it("uses the settings of the latest report", () => {
    const result = recordFailure(closed({ failures: 1 }), { failures: 2, openMs: 5_000 }, T0);
    expect(result.breaker).toMatchObject({ state: "open", openUntil: T0 + 5_000, settings: { failures: 2, openMs: 5_000 } });
  });
});

describe("successes", () => {
  it("resets the failures of a closed breaker", () => {
    expect(recordSuccess(closed({ failures: 4 }), SETTINGS, T0, 0)).toMatchObject({ state: "closed", failures: 0 });
  });

  it("closes a half-open breaker (the probe succeeded), starts releasing the parked steps and forgets the doubling", () => {
    const after = recordSuccess(halfOpen({ openMs: 120_000, probe: { ...A, since: T0 } }), SETTINGS, T0 + 10, 3);
    expect(after).toMatchObject({ state: "closed", failures: 0, openMs: SETTINGS.openMs, releasing: { round: 0, nextAt: T0 + 10 } });
    expect(after.openUntil).toBeUndefined();
    expect(after.probe).toBeUndefined();
  });

  it("closes with nothing to release when no step is parked", () => {
    expect(recordSuccess(open(), SETTINGS, T0, 0).releasing).toBeUndefined();
  });
});

describe("admission", () => {
  it.each([
    { name: "lets every attempt through a closed breaker", before: closed(), caller: A, now: T0, admitted: true, state: "closed" },
    { name: "parks an attempt while the breaker is open", before: open(), caller: A, now: T0 + 29_999, admitted: false, state: "open" },
    { name: "lets the first attempt after the open period through as the probe", before: open(), caller: A, now: T0 + 30_000, admitted: true, state: "half_open" },
    { name: "lets the first attempt of a half-open breaker with no probe through", before: halfOpen(), caller: A, now: T0 + 1, admitted: true, state: "half_open" },
    { name: "parks any other attempt while the probe is out", before: halfOpen({ probe: { ...A, since: T0 } }), caller: B, now: T0 + 59_999, admitted: false, state: "half_open" },
    { name: "lets the probe's own step through again (its attempt was released)", before: halfOpen({ probe: { ...A, since: T0 } }), caller: A, now: T0 + 5, admitted: true, state: "half_open" },
    { name: "lets another attempt probe once the probe has been quiet for two open periods", before: halfOpen({ probe: { ...A, since: T0 } }), caller: B, now: T0 + 60_000, admitted: true, state: "half_open" },
  ])("$name", ({ before, caller, now, admitted, state }) => {
    const result = admit(before, SETTINGS, caller, now);
    expect(result.admitted).toBe(admitted);
    expect(result.breaker.state).toBe(state);
    if (admitted && state === "half_open") expect(result.breaker.probe).toEqual({ ...caller, since: now });
  });
});

describe("the alarm", () => {
  it("makes an open breaker half-open at openUntil and sends the longest-parked step as its probe", () => {
    const result = onAlarm(open(), T0 + 30_000, { count: 3, oldest: A });
    expect(result.release).toBe("probe");
    expect(result.breaker).toMatchObject({ state: "half_open", probe: { ...A, since: T0 + 30_000 } });
  });

  it("makes it half-open with no probe when nothing is parked: the next admitted attempt probes", () => {
    const result = onAlarm(open(), T0 + 30_000, { count: 0 });
    expect(result).toMatchObject({ release: 0, breaker: { state: "half_open" } });
    expect(result.breaker.probe).toBeUndefined();
  });

  it("does nothing before openUntil (an early or repeated alarm is harmless)", () => {
    const before = open();
    expect(onAlarm(before, T0 + 29_999, { count: 3, oldest: A })).toEqual({ breaker: before, release: 0 });
  });

  it("replaces a probe that has been quiet for two open periods with the next parked step", () => {
    const result = onAlarm(halfOpen({ probe: { ...A, since: T0 } }), T0 + 60_000, { count: 1, oldest: B });
    expect(result).toMatchObject({ release: "probe", breaker: { probe: { ...B, since: T0 + 60_000 } } });
  });

  it("releases parked steps after a close at a bounded rate: 10 in the first second, doubling each second, at most 100 a second", () => {
    let breaker = recordSuccess(halfOpen(), SETTINGS, T0, 1_000);
    let parked = 1_000;
    const batches: number[] = [];
    for (let second = 0; parked > 0; second++) {
      const now = T0 + second * RELEASE.everyMs;
      // Early: nothing goes before the next batch is due.
      expect(onAlarm(breaker, now - 1, { count: parked, oldest: A }).release).toBe(0);
      const result = onAlarm(breaker, now, { count: parked, oldest: A });
      batches.push(result.release as number);
      parked -= result.release as number;
      breaker = result.breaker;
      expect(nextAlarmAt(breaker, parked)).toBe(parked > 0 ? now + RELEASE.everyMs : undefined);
    }
    expect(batches).toEqual([10, 20, 40, 80, 100, 100, 100, 100, 100, 100, 100, 100, 50]);
    expect(breaker.releasing).toBeUndefined();
  });
});

describe("when the alarm is due", () => {
  it.each([
    { name: "open: at openUntil", breaker: open(), parked: 2, at: T0 + 30_000 },
    { name: "half-open with a probe out: when the probe has gone quiet", breaker: halfOpen({ probe: { ...A, since: T0 } }), parked: 2, at: T0 + 60_000 },
    { name: "half-open with no probe and steps parked: at once", breaker: halfOpen({ updatedAt: T0 + 5 }), parked: 2, at: T0 + 5 },
    { name: "half-open with no probe and nothing parked: not at all (the next attempt probes)", breaker: halfOpen(), parked: 0, at: undefined },
    { name: "closed with nothing to release: not at all", breaker: closed({ failures: 3 }), parked: 0, at: undefined },
  ])("$name", ({ breaker, parked, at }) => {
    expect(nextAlarmAt(breaker, parked)).toBe(at);
  });
});

describe("a probe its workflow did not take", () => {
  it("is given up, so the next parked step or attempt can probe", () => {
    expect(probeNotTaken(halfOpen({ probe: { ...A, since: T0 } }), A).probe).toBeUndefined();
  });

  it("leaves a newer probe alone", () => {
    expect(probeNotTaken(halfOpen({ probe: { ...B, since: T0 } }), A).probe).toEqual({ ...B, since: T0 });
  });
});
