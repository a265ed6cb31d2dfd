import { describe, expect, it } from "vitest";
import { INDEX_DEADLINE_DRIFT_MS, INDEX_WATCHDOG_MS, indexNeedsEntry } from "../../src/domain/index-entry";
import { nextDeadlineAt } from "../../src/domain/machine";
import type { WorkflowState } from "../../src/domain/state";
import { claimed, plan, Run, sleepStep, step, succeeded, T0, wait, waitStep } from "./builders";

const DAY = 86_400_000;

/** A running workflow as the shell stores it after writing its index entry with `indexed` as the deadline. */
function indexedAt(indexed: number | undefined, fields: Partial<WorkflowState> = {}): WorkflowState {
  const { state } = new Run(plan([step("a")]));
  return { ...state, ...(indexed === undefined ? {} : { indexedDeadlineAt: indexed }), ...fields };
}

describe("indexNeedsEntry", () => {
  const rows: { name: string; previous: WorkflowState | undefined; next: WorkflowState; deadline: number | undefined; expected: boolean }[] = [
    { name: "a new workflow", previous: undefined, next: indexedAt(undefined), deadline: T0 + 500, expected: true },
    {
      name: "a status change, however close the deadline",
      previous: indexedAt(T0 + 500),
      next: indexedAt(T0 + 500, { status: "paused" }),
      deadline: T0 + 500,
      expected: true,
    },
    { name: "the deadline moved a little", previous: indexedAt(T0 + 500), next: indexedAt(T0 + 500), deadline: T0 + 60_000, expected: false },
    {
      name: "the deadline moved exactly the drift allowed",
      previous: indexedAt(T0),
      next: indexedAt(T0),
      deadline: T0 + INDEX_DEADLINE_DRIFT_MS,
      expected: false,
    },
    {
      name: "the deadline moved later by more than the drift (a long sleep began)",
      previous: indexedAt(T0),
      next: indexedAt(T0),
      deadline: T0 + INDEX_DEADLINE_DRIFT_MS + 1,
      expected: true,
    },
    {
      name: "the deadline moved earlier by more than the drift (a long sleep ended early)",
      previous: indexedAt(T0 + DAY),
      next: indexedAt(T0 + DAY),
      deadline: T0 + 1_000,
      expected: true,
    },
    {
      name: "no deadline any more, so the watchdog date counts, and it is close to the indexed one",
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
      name: "a state from before the drift rule (nothing indexed to compare with)",
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

  it.each(rows)("is $expected for $name", ({ previous, next, deadline, expected }) => {
    expect(indexNeedsEntry(previous, next, deadline)).toBe(expected);
  });

  it("writes the entry again when a step starts a day-long sleep, but not when the sleep ends and the next step runs", () => {
    const run = new Run(plan([step("a"), sleepStep("nap", { durationMs: DAY }), step("b")]));
    run.state.indexedDeadlineAt = nextDeadlineAt(run.state);
    run.send(claimed("a"));

    const beforeSleep = run.state;
    run.send(succeeded("a"));
    expect(indexNeedsEntry(beforeSleep, run.state, nextDeadlineAt(run.state))).toBe(true);
    run.state.indexedDeadlineAt = nextDeadlineAt(run.state);

    const asleep = run.state;
    run.wait(DAY).send({ type: "DeadlinesReached" });
    expect(run.step("b").status).toBe("scheduled");
    expect(indexNeedsEntry(asleep, run.state, nextDeadlineAt(run.state))).toBe(false);
  });

  it("writes the entry again when a wait starts with a long timeout", () => {
    const run = new Run(plan([step("a"), waitStep("approval", { event: "approved", timeoutMs: DAY })]));
    run.state.indexedDeadlineAt = nextDeadlineAt(run.state);
    run.play([claimed("a"), wait(10)]);
    const before = run.state;
    run.send(succeeded("a"));
    expect(indexNeedsEntry(before, run.state, nextDeadlineAt(run.state))).toBe(true);
  });
});
