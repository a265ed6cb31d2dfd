import { describe, expect, it } from "vitest";
import { INDEX_DEADLINE_DRIFT_MS, INDEX_LEASE_MS, INDEX_WATCHDOG_MS, indexedDeadlineOf, indexNeedsEntry } from "../../src/domain/machine/index-entry";
import { nextDeadlineAt } from "../../src/domain/machine";
import type { WorkflowState } from "../../src/domain/machine/state";
import { claimed, plan, Run, sleepStep, step, succeeded, T0, wait, waitStep } from "./builders";

const DAY = 86_400_000;

/** A running workflow as the shell stores it after writing its index entry with `indexed` as the deadline. */
function indexedAt(indexed: number | undefined, fields: Partial<WorkflowState> = {}): WorkflowState {
  const { state } = new Run(plan([step("a")]));
  return { ...state, ...(indexed === undefined ? {} : { indexedDeadlineAt: indexed }), ...fields };
}

describe("indexNeedsEntry", () => {
  // Indexed at a lease (INDEX_LEASE_MS) from T0 unless a row says otherwise; the clock reads T0.
  const LEASED = T0 + INDEX_LEASE_MS;
  const rows: { name: string; previous: WorkflowState | undefined; next: WorkflowState; deadline: number | undefined; now?: number; expected: boolean }[] = [
    { name: "a new workflow", previous: undefined, next: indexedAt(undefined), deadline: T0 + 500, expected: true },
    {
      name: "a status change, however far the lease",
      previous: indexedAt(LEASED),
      next: indexedAt(LEASED, { status: "paused" }),
      deadline: T0 + 500,
      expected: true,
    },
    { name: "the next deadline is near and the lease has more than half left", previous: indexedAt(LEASED), next: indexedAt(LEASED), deadline: T0 + 60_000, expected: false },
    {
      name: "the lease has exactly half left",
      previous: indexedAt(LEASED),
      next: indexedAt(LEASED),
      deadline: T0 + 1_000,
      now: T0 + INDEX_LEASE_MS / 2,
      expected: false,
    },
    {
      name: "the lease has less than half left: renewed before the sweep could see a healthy workflow as overdue",
      previous: indexedAt(LEASED),
      next: indexedAt(LEASED),
      deadline: T0 + INDEX_LEASE_MS / 2 + 2_000,
      now: T0 + INDEX_LEASE_MS / 2 + 1,
      expected: true,
    },
    {
      name: "the next deadline is past the lease (a long retry backoff): the lease would lapse before the object runs",
      previous: indexedAt(LEASED),
      next: indexedAt(LEASED),
      deadline: LEASED + 1,
      expected: true,
    },
    {
      name: "the indexed date promises a run later than needed, within the drift allowed",
      previous: indexedAt(LEASED + INDEX_DEADLINE_DRIFT_MS),
      next: indexedAt(LEASED + INDEX_DEADLINE_DRIFT_MS),
      deadline: T0 + 1_000,
      expected: false,
    },
    {
      name: "the indexed date promises a run far too late (a long sleep ended early)",
      previous: indexedAt(T0 + DAY),
      next: indexedAt(T0 + DAY),
      deadline: T0 + 1_000,
      expected: true,
    },
    {
      name: "no deadline any more, so the watchdog date counts, and it is the indexed one",
      previous: indexedAt(T0 + INDEX_WATCHDOG_MS),
      next: indexedAt(T0 + INDEX_WATCHDOG_MS),
      deadline: undefined,
      expected: false,
    },
    {
      name: "no deadline any more, and the watchdog date is far from the indexed one",
      previous: indexedAt(T0 + DAY),
      next: indexedAt(T0 + DAY),
      deadline: undefined,
      expected: true,
    },
    {
      name: "a state from before leases (nothing indexed to compare with)",
      previous: indexedAt(undefined),
      next: indexedAt(undefined),
      deadline: T0 + DAY,
      expected: false,
    },
    {
      name: "an ended workflow whose status did not change",
      previous: indexedAt(T0, { status: "terminated" }),
      next: indexedAt(T0, { status: "terminated" }),
      deadline: undefined,
      expected: false,
    },
  ];

  it.each(rows)("is $expected for $name", ({ previous, next, deadline, now, expected }) => {
    expect(indexNeedsEntry(previous, next, deadline, now ?? T0)).toBe(expected);
  });

  it.each([
    { name: "a near deadline is indexed a lease ahead", deadline: T0 + 500, expected: T0 + INDEX_LEASE_MS },
    { name: "a deadline past the lease is indexed as it is", deadline: T0 + DAY, expected: T0 + DAY },
    { name: "no deadline: the watchdog date", deadline: undefined, expected: T0 + INDEX_WATCHDOG_MS },
  ])("indexes $name", ({ deadline, expected }) => {
    expect(indexedDeadlineOf(indexedAt(undefined, { updatedAt: T0 }), deadline, T0)).toBe(expected);
  });

  it("writes the entry again when a step starts a day-long sleep, and when the sleep ends (its lease is up), not on the step after", () => {
    const run = new Run(plan([step("a"), sleepStep("nap", { durationMs: DAY }), step("b"), step("c")]));
    const index = () => (run.state.indexedDeadlineAt = indexedDeadlineOf(run.state, nextDeadlineAt(run.state), run.now));
    index();
    run.send(claimed("a"));

    const beforeSleep = run.state;
    run.send(succeeded("a"));
    expect(indexNeedsEntry(beforeSleep, run.state, nextDeadlineAt(run.state), run.now)).toBe(true);
    index();
    expect(run.state.indexedDeadlineAt).toBe(run.step("nap").timerAt);

    const asleep = run.state;
    run.wait(DAY).send({ type: "DeadlinesReached" });
    expect(run.step("b").status).toBe("scheduled");
    expect(indexNeedsEntry(asleep, run.state, nextDeadlineAt(run.state), run.now)).toBe(true);
    index();

    const awake = run.state;
    run.play([claimed("b"), wait(1_000), succeeded("b")]);
    expect(indexNeedsEntry(awake, run.state, nextDeadlineAt(run.state), run.now)).toBe(false);
  });

  it("writes the entry again when a wait starts with a long timeout", () => {
    const run = new Run(plan([step("a"), waitStep("approval", { event: "approved", timeoutMs: DAY })]));
    run.state.indexedDeadlineAt = indexedDeadlineOf(run.state, nextDeadlineAt(run.state), run.now);
    run.play([claimed("a"), wait(10)]);
    const before = run.state;
    run.send(succeeded("a"));
    expect(indexNeedsEntry(before, run.state, nextDeadlineAt(run.state), run.now)).toBe(true);
  });
});
