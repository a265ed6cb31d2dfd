import { describe, expect, it } from "vitest";
import { classifyHttpStatus, parseRetryAfter } from "../../src/domain/machine/remote-outcome";

const NOW = Date.UTC(2025, 0, 1, 0, 0, 0);

describe("classifyHttpStatus", () => {
  it.each([
    { status: 200, kind: "succeeded" },
    { status: 201, kind: "succeeded" },
    { status: 202, kind: "accepted" },
    { status: 204, kind: "succeeded" },
    { status: 400, kind: "permanent" },
    { status: 401, kind: "permanent" },
    { status: 404, kind: "permanent" },
    { status: 408, kind: "transient" },
    { status: 409, kind: "permanent" },
    { status: 422, kind: "permanent" },
    { status: 425, kind: "transient" },
    { status: 429, kind: "transient" },
    { status: 500, kind: "transient" },
    { status: 502, kind: "transient" },
    { status: 503, kind: "transient" },
    { status: 304, kind: "transient" },
  ])("classifies $status as $kind", ({ status, kind }) => {
    expect(classifyHttpStatus(status, null, NOW)).toEqual({ kind });
  });

  it("carries a Retry-After in seconds on a transient answer", () => {
    expect(classifyHttpStatus(429, "120", NOW)).toEqual({ kind: "transient", retryAfterMs: 120_000 });
  });

  it("carries a Retry-After given as an HTTP date on a transient answer", () => {
    expect(classifyHttpStatus(503, "Wed, 01 Jan 2025 00:00:30 GMT", NOW)).toEqual({ kind: "transient", retryAfterMs: 30_000 });
  });

  it("ignores a Retry-After it cannot read", () => {
    expect(classifyHttpStatus(503, "soon", NOW)).toEqual({ kind: "transient" });
  });

  it("ignores Retry-After on a permanent failure", () => {
    expect(classifyHttpStatus(400, "5", NOW)).toEqual({ kind: "permanent" });
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
