import { describe, expect, it } from "vitest";
import { resolveRetryPolicy, resolveTimeouts, retryDelayMs, type RetryPolicy } from "../../src/domain/language/retry-policy";

const steady = (): number => 0.5;
const lowest = (): number => 0;
const highest = (): number => 1;

/** The contract's default policy without jitter, so delays are exact. */
const exact: RetryPolicy = { maxAttempts: 10, initialIntervalMs: 1_000, backoffCoefficient: 2, maxIntervalMs: 60_000, jitter: 0 };
const jittery: RetryPolicy = { ...exact, jitter: 0.2 };

describe("retryDelayMs", () => {
  it.each([
    { retry: 1, delay: 1_000 },
    { retry: 2, delay: 2_000 },
    { retry: 3, delay: 4_000 },
    { retry: 4, delay: 8_000 },
    { retry: 6, delay: 32_000 },
  ])("waits $delay ms before retry $retry: exponential from initialIntervalMs", ({ retry, delay }) => {
    expect(retryDelayMs(exact, retry, steady)).toBe(delay);
  });

  it("follows the backoff coefficient", () => {
    const triple = { ...exact, backoffCoefficient: 3 };
    expect([1, 2, 3].map((retry) => retryDelayMs(triple, retry, steady))).toEqual([1_000, 3_000, 9_000]);
  });

  it.each([
    { draw: "the lowest", random: lowest, retry: 1, delay: 800 },
    { draw: "the highest", random: highest, retry: 1, delay: 1_200 },
    { draw: "the middle", random: steady, retry: 1, delay: 1_000 },
    { draw: "the lowest", random: lowest, retry: 3, delay: 3_200 },
    { draw: "the highest", random: highest, retry: 3, delay: 4_800 },
  ])("moves retry $retry by at most the jitter fraction: $draw draw gives $delay ms", ({ random, retry, delay }) => {
    expect(retryDelayMs(jittery, retry, random)).toBe(delay);
  });

  it("never waits longer than maxIntervalMs, jitter included", () => {
    expect(retryDelayMs(exact, 20, steady)).toBe(60_000);
    expect(retryDelayMs(jittery, 7, highest)).toBe(60_000);
    expect(retryDelayMs({ ...exact, maxIntervalMs: 1_500 }, 2, steady)).toBe(1_500);
  });

  it("honours a Retry-After longer than the backoff", () => {
    expect(retryDelayMs(exact, 1, steady, 5_000)).toBe(5_000);
  });

  it("keeps the backoff when Retry-After asks for less", () => {
    expect(retryDelayMs(exact, 3, steady, 500)).toBe(4_000);
  });

  it("caps a Retry-After at maxIntervalMs, so a remote cannot park a step", () => {
    expect(retryDelayMs(exact, 1, steady, 3_600_000)).toBe(60_000);
  });

  it("retries at once with a zero initial interval", () => {
    expect(retryDelayMs({ ...exact, initialIntervalMs: 0 }, 4, highest)).toBe(0);
  });
});

describe("resolving policies", () => {
  it("layers defaults, then the definition's defaults, then the step's own values", () => {
    expect(resolveRetryPolicy({ maxAttempts: 5, jitter: 0 }, { maxAttempts: 2, initialIntervalMs: undefined })).toEqual({
      maxAttempts: 2,
      initialIntervalMs: 1_000,
      backoffCoefficient: 2,
      maxIntervalMs: 60_000,
      jitter: 0,
    });
    expect(resolveTimeouts(undefined, { heartbeatMs: 5_000 })).toEqual({ startToCloseMs: 300_000, heartbeatMs: 5_000 });
    expect(resolveTimeouts({ scheduleToStartMs: 2_000 }, { heartbeatMs: 5_000 })).toEqual({ scheduleToStartMs: 2_000, startToCloseMs: 300_000, heartbeatMs: 5_000 });
  });

  const lists = (policy: RetryPolicy) => ({ retryableStatuses: policy.retryableStatuses, nonRetryableStatuses: policy.nonRetryableStatuses });

  it.each([
    { name: "no lists anywhere", defaults: undefined, own: undefined, retryable: undefined, nonRetryable: undefined },
    { name: "the definition's lists, inherited", defaults: { retryableStatuses: [404], nonRetryableStatuses: [409] }, own: {}, retryable: [404], nonRetryable: [409] },
    { name: "a step's list, replacing the definition's (not merged)", defaults: { retryableStatuses: [404] }, own: { retryableStatuses: [425] }, retryable: [425], nonRetryable: undefined },
    { name: "a step's empty list, clearing the definition's", defaults: { nonRetryableStatuses: [409] }, own: { nonRetryableStatuses: [] }, retryable: undefined, nonRetryable: [] },
    { name: "a step's retryable status, leaving the inherited non-retryable list", defaults: { nonRetryableStatuses: [409, 503] }, own: { retryableStatuses: [409] }, retryable: [409], nonRetryable: [503] },
    { name: "a step's non-retryable status, leaving the inherited retryable list", defaults: { retryableStatuses: [404, 409] }, own: { nonRetryableStatuses: [404] }, retryable: [409], nonRetryable: [404] },
  ])("resolves the status lists: $name", ({ defaults, own, retryable, nonRetryable }) => {
    expect(lists(resolveRetryPolicy(defaults, own))).toEqual({ retryableStatuses: retryable, nonRetryableStatuses: nonRetryable });
  });

  it("adds no status list to a policy that sets none, so stored plans keep their shape", () => {
    expect(Object.keys(resolveRetryPolicy({ maxAttempts: 2 }, { jitter: 0 })).sort()).toEqual(["backoffCoefficient", "initialIntervalMs", "jitter", "maxAttempts", "maxIntervalMs"]);
  });
});
