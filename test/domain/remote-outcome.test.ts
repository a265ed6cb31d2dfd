import { describe, expect, it } from "vitest";
import { classifyHttpStatus, parseRetryAfter } from "../../src/domain/machine/remote-outcome";

const NOW = Date.UTC(2025, 0, 1, 0, 0, 0);

const NONE = {};
const MOVED = { nonRetryableStatuses: [409, 503], retryableStatuses: [404, 422] };

describe("classifyHttpStatus", () => {
  it.each([
    { status: 200, kind: "succeeded" },
    { status: 201, kind: "succeeded" },
    { status: 202, kind: "accepted" },
    { status: 204, kind: "succeeded" },
  ])("classifies $status as $kind", ({ status, kind }) => {
    expect(classifyHttpStatus(status, null, NOW)).toEqual({ kind });
  });

  // Status × the step's lists → transient (retried) or permanent, and the rule that decided.
  it.each([
    { status: 400, rules: NONE, kind: "permanent", rule: "default" },
    { status: 401, rules: NONE, kind: "permanent", rule: "default" },
    { status: 404, rules: NONE, kind: "permanent", rule: "default" },
    { status: 408, rules: NONE, kind: "transient", rule: "default" },
    { status: 409, rules: NONE, kind: "permanent", rule: "default" },
    { status: 422, rules: NONE, kind: "permanent", rule: "default" },
    { status: 425, rules: NONE, kind: "transient", rule: "default" },
    { status: 429, rules: NONE, kind: "transient", rule: "default" },
    { status: 500, rules: NONE, kind: "transient", rule: "default" },
    { status: 502, rules: NONE, kind: "transient", rule: "default" },
    { status: 503, rules: NONE, kind: "transient", rule: "default" },
    { status: 304, rules: NONE, kind: "transient", rule: "default" },
    { status: 409, rules: MOVED, kind: "permanent", rule: "nonRetryableStatuses" },
    { status: 503, rules: MOVED, kind: "permanent", rule: "nonRetryableStatuses" },
    { status: 404, rules: MOVED, kind: "transient", rule: "retryableStatuses" },
    { status: 422, rules: MOVED, kind: "transient", rule: "retryableStatuses" },
    { status: 400, rules: MOVED, kind: "permanent", rule: "default" },
    { status: 500, rules: MOVED, kind: "transient", rule: "default" },
    { status: 429, rules: MOVED, kind: "transient", rule: "default" },
    { status: 304, rules: { nonRetryableStatuses: [304] }, kind: "permanent", rule: "nonRetryableStatuses" },
    { status: 409, rules: { retryableStatuses: [] }, kind: "permanent", rule: "default" },
    { status: 409, rules: { nonRetryableStatuses: [] }, kind: "permanent", rule: "default" },
    { status: 500, rules: { retryableStatuses: [500] }, kind: "transient", rule: "retryableStatuses" },
  ])("classifies $status with $rules as $kind, decided by $rule", ({ status, rules, kind, rule }) => {
    expect(classifyHttpStatus(status, null, NOW, rules)).toEqual({ kind, rule });
  });

  it.each([200, 202, 204])("never moves a success (%i) across the line, whatever the lists say", (status) => {
    const listed = { nonRetryableStatuses: [status], retryableStatuses: [] };
    expect(classifyHttpStatus(status, null, NOW, listed)).toEqual(classifyHttpStatus(status, null, NOW));
  });

  it("carries a Retry-After in seconds on a transient answer", () => {
    expect(classifyHttpStatus(429, "120", NOW)).toEqual({ kind: "transient", rule: "default", retryAfterMs: 120_000 });
  });

  it("carries a Retry-After given as an HTTP date on a transient answer", () => {
    expect(classifyHttpStatus(503, "Wed, 01 Jan 2025 00:00:30 GMT", NOW)).toEqual({ kind: "transient", rule: "default", retryAfterMs: 30_000 });
  });

  it("carries a Retry-After on a status the step made retryable", () => {
    expect(classifyHttpStatus(404, "3", NOW, MOVED)).toEqual({ kind: "transient", rule: "retryableStatuses", retryAfterMs: 3_000 });
  });

  it("ignores a Retry-After it cannot read", () => {
    expect(classifyHttpStatus(503, "soon", NOW)).toEqual({ kind: "transient", rule: "default" });
  });

  it("ignores Retry-After on a permanent failure, one the step made permanent included", () => {
    expect(classifyHttpStatus(400, "5", NOW)).toEqual({ kind: "permanent", rule: "default" });
    expect(classifyHttpStatus(503, "5", NOW, MOVED)).toEqual({ kind: "permanent", rule: "nonRetryableStatuses" });
  });
});

describe("parseRetryAfter", () => {
  it.each([
    { header: "0", ms: 0 },
    { header: "5", ms: 5_000 },
    { header: " 7 ", ms: 7_000 },
    { header: "Wed, 01 Jan 2025 00:01:00 GMT", ms: 60_000 },
    { header: "Tue, 31 Dec 2024 23:59:00 GMT", ms: 0 },
  ])("reads $header as $ms ms", ({ header, ms }) => {
    expect(parseRetryAfter(header, NOW)).toBe(ms);
  });

  it.each([null, "", "soon", "5 minutes"])("reads %j as no delay at all", (header) => {
    expect(parseRetryAfter(header, NOW)).toBeUndefined();
  });
});
