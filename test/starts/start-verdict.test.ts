// What the consumer makes of each answer a start can give: one row per outcome.
import { describe, expect, it } from "vitest";
import type { StartOutcome } from "../../src/admission/start-workflow";
import { deferredAfterFailure, verdictOf } from "../../src/starts/start-verdict";

const workflow = {} as Extract<StartOutcome, { ok: true }>["workflow"];
const issue = { code: "custom" as const, path: ["definition", "steps", 0, "action", "url"], message: "host not allowed" };

const ROWS: [string, StartOutcome, ReturnType<typeof verdictOf>][] = [
  ["started", { ok: true, created: true, workflow }, { kind: "started", created: true }],
  ["already started with this body", { ok: true, created: false, workflow }, { kind: "started", created: false }],
  ["another body under its id", { ok: false, code: "conflict", message: "taken" }, { kind: "dead", error: { code: "conflict", message: "taken" } }],
  ["a definitionRef naming nothing", { ok: false, code: "not_found", message: "no such" }, { kind: "dead", error: { code: "not_found", message: "no such" } }],
  [
    "a definition the targets refuse",
    { ok: false, code: "validation_failed", message: "Invalid request", details: [issue] },
    { kind: "dead", error: { code: "validation_failed", message: "Invalid request", details: [issue] } },
  ],
  ["back-pressure", { ok: false, code: "overloaded", message: "behind", retryAfterSeconds: 12 }, { kind: "deferred", delaySeconds: 12, reason: "behind" }],
  ["back-pressure without a wait", { ok: false, code: "overloaded", message: "behind", retryAfterSeconds: 0 }, { kind: "deferred", delaySeconds: 1, reason: "behind" }],
];

describe("the verdict on a start's outcome", () => {
  it.each(ROWS)("%s", (_name, outcome, verdict) => {
    expect(verdictOf(outcome, 1)).toEqual(verdict);
  });

  it("defers a start the deployment's settings refuse (not the message's fault), backing off with the deliveries", () => {
    const outcome: StartOutcome = { ok: false, code: "not_configured", message: "TASK_TOKEN_SECRET is not set" };
    expect(verdictOf(outcome, 1)).toMatchObject({ kind: "deferred", reason: "TASK_TOKEN_SECRET is not set" });
  });
});

describe("the delay after a failure", () => {
  const middle = () => 0.5;
  it.each([
    [1, 2],
    [2, 4],
    [3, 8],
    [6, 64],
    [8, 256],
    [9, 300],
    [100, 300],
  ])("after delivery %i is %i s (doubling from 2 s, at most 5 min)", (deliveries, seconds) => {
    expect(deferredAfterFailure(deliveries, "down", middle)).toEqual({ kind: "deferred", delaySeconds: seconds, reason: "down" });
  });
});
