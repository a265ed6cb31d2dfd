import { describe, expect, it } from "vitest";
import { ShepherdApiError } from "../../src/client";
import { abortCauseOf, backoffMs, deadlineInMs, failureOf, heartbeatEveryMs, isPermanentPollError, isTransientReportError } from "../../src/client/worker-policy";

const apiError = (status: number) => new ShepherdApiError(status, "x", "x");

describe("the worker loop's decisions (worker-policy.ts)", () => {
  it.each([
    ["a third of the task's heartbeatMs by default", 30_000, undefined, 10_000],
    ["more often when asked", 30_000, 2_000, 2_000],
    ["never less often than a third, whatever is asked", 30_000, 60_000, 10_000],
    ["not faster than the floor for a tiny heartbeatMs", 30, undefined, 50],
  ])("heartbeats %s", (_name, taskHeartbeatMs, asked, expected) => {
    expect(heartbeatEveryMs(taskHeartbeatMs, asked)).toBe(expected);
  });

  it.each([
    [1, 0.5, 500],
    [3, 0.5, 2_000],
    [10, 0.99, 29_700],
    [1, 0, 0],
  ])("backs off after failure %i with random %d: %i ms (full jitter under a doubling ceiling)", (failures, random, expected) => {
    expect(backoffMs({ initialMs: 1_000, maxMs: 30_000 }, failures, random)).toBe(expected);
  });

  it("ends a handler's time at the service's deadline, or startToCloseMs after arrival when this clock runs behind", () => {
    expect(deadlineInMs({ deadlineAt: 10_000, startToCloseMs: 60_000 }, 0, 4_000)).toBe(6_000);
    expect(deadlineInMs({ deadlineAt: 90_000, startToCloseMs: 5_000 }, 0, 1_000)).toBe(4_000);
    expect(deadlineInMs({ deadlineAt: 1_000, startToCloseMs: 5_000 }, 0, 2_000)).toBe(0);
  });

  it.each([
    ["an Error", new Error("disk full"), { message: "disk full", retryable: true }],
    ["an Error with retryable: false", Object.assign(new Error("corrupt"), { retryable: false }), { message: "corrupt", retryable: false }],
    ["an Error with retryable: true", Object.assign(new Error("busy"), { retryable: true }), { message: "busy", retryable: true }],
    ["a string", "nope", { message: "nope", retryable: true }],
    ["an Error without a message", new TypeError(""), { message: "TypeError", retryable: true }],
    ["an object with retryable: false", { retryable: false }, { message: "[object Object]", retryable: false }],
  ])("fails an attempt from %s thrown", (_name, thrown, expected) => {
    expect(failureOf(thrown)).toEqual(expected);
  });

  it("keeps a failure's message within the API's 4 096 characters", () => {
    expect(failureOf(new Error("x".repeat(5_000))).message).toHaveLength(4_096);
  });

  it.each([
    [apiError(401), true],
    [apiError(400), true],
    [apiError(404), true],
    [apiError(429), false],
    [apiError(408), false],
    [apiError(500), false],
    [apiError(503), false],
    [new TypeError("fetch failed"), false],
  ])("a poll failing with %s is refused for good: %s", (error, expected) => {
    expect(isPermanentPollError(error)).toBe(expected);
  });

  it("reads 401 as an expired token and 404, 409, 410 as an attempt no longer current; sends a report again after a 5xx or no answer", () => {
    expect([401, 404, 409, 410, 400, 500].map((status) => abortCauseOf(apiError(status)))).toEqual(["token_expired", "not_current", "not_current", "not_current", undefined, undefined]);
    expect([500, 503, 429, 400].map((status) => isTransientReportError(apiError(status)))).toEqual([true, true, true, false]);
    expect(isTransientReportError(new TypeError("fetch failed"))).toBe(true);
  });
});
