import { describe, expect, it } from "vitest";
import { backoffMs } from "../../src/domain/machine/backoff";

const middle = () => 0.5;
const highest = () => 1;
const lowest = () => 0;

describe("backoff for our own retries", () => {
  it.each([
    [0, 1_000],
    [1, 2_000],
    [2, 4_000],
    [5, 32_000],
    [6, 60_000],
    [60, 60_000],
  ])("waits initialMs doubled per failure, capped: after %i failures, %i ms", (failures, expected) => {
    expect(backoffMs(failures, { initialMs: 1_000, maxMs: 60_000 }, middle)).toBe(expected);
  });

  it("spreads callers by the jitter fraction either way, never past the cap", () => {
    expect(backoffMs(1, { initialMs: 1_000, maxMs: 60_000, jitter: 0.2 }, lowest)).toBe(1_600);
    expect(backoffMs(1, { initialMs: 1_000, maxMs: 60_000, jitter: 0.2 }, highest)).toBe(2_400);
    expect(backoffMs(10, { initialMs: 1_000, maxMs: 60_000, jitter: 0.2 }, highest)).toBe(60_000);
  });

  it("treats a negative failure count as none", () => {
    expect(backoffMs(-3, { initialMs: 500, maxMs: 10_000 })).toBe(500);
  });
});
