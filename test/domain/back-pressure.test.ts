import { describe, expect, it } from "vitest";
import { backPressure, QUEUE_LAG_FRESH_MS, type BackPressure, type QueueLagSample } from "../../src/domain/admission/back-pressure";

const NOW = 1_700_000_000_000;
const BOUND = 10_000;

const rows: { name: string; sample: QueueLagSample | undefined; expected: BackPressure }[] = [
  { name: "accepts starts when no lag was ever measured", sample: undefined, expected: { overloaded: false } },
  { name: "accepts starts while the queue is within the bound", sample: { lagMs: BOUND, at: NOW }, expected: { overloaded: false } },
  { name: "refuses starts past the bound, retrying once the excess should have drained", sample: { lagMs: 24_000, at: NOW }, expected: { overloaded: true, lagMs: 24_000, retryAfterSeconds: 14 } },
  { name: "asks for at least a second", sample: { lagMs: BOUND + 1, at: NOW - 1 }, expected: { overloaded: true, lagMs: BOUND + 1, retryAfterSeconds: 1 } },
  { name: "never asks a client to wait more than 30 s", sample: { lagMs: 600_000, at: NOW }, expected: { overloaded: true, lagMs: 600_000, retryAfterSeconds: 30 } },
  { name: "trusts a measurement just fresh enough", sample: { lagMs: 20_000, at: NOW - QUEUE_LAG_FRESH_MS }, expected: { overloaded: true, lagMs: 20_000, retryAfterSeconds: 10 } },
  { name: "ignores a stale measurement: no deliveries means an empty queue", sample: { lagMs: 600_000, at: NOW - QUEUE_LAG_FRESH_MS - 1 }, expected: { overloaded: false } },
];

describe("back-pressure from the task queue's lag", () => {
  it.each(rows)("$name", ({ sample, expected }) => expect(backPressure(sample, NOW, BOUND)).toEqual(expected));

  it("never refuses with a bound of a day and a lag of an hour", () => {
    expect(backPressure({ lagMs: 3_600_000, at: NOW }, NOW, 86_400_000)).toEqual({ overloaded: false });
  });
});
