import { describe, expect, it } from "vitest";
import { checkDefinition, DefinitionSchema } from "../../src/domain/language/definition";
import { planWorkflow } from "../../src/domain/language/plan";
import { DEFAULT_RETRY, DEFAULT_TIMEOUTS } from "../../src/domain/language/retry-policy";
import { MAX_TIMER_MS, type DefinitionInput, type StepInput } from "../../src/domain/language/schemas";
import { httpAction, sleepStep, step, waitStep } from "./builders";

function definition(steps: StepInput[], fields: Partial<DefinitionInput> = {}): DefinitionInput {
  return { name: "shop", steps, ...fields };
}

const approval = { event: "approved", timeoutMs: 60_000 };

describe("checkDefinition of the step kinds", () => {
  const rows: { name: string; steps: StepInput[]; issues: { path: (string | number)[]; message: string }[] }[] = [
    { name: "accepts a sleep for a duration", steps: [sleepStep("nap", { durationMs: 1_000 })], issues: [] },
    { name: "accepts a sleep until epoch milliseconds", steps: [sleepStep("nap", { until: 1_700_000_000_000 })], issues: [] },
    { name: "accepts a sleep until an ISO 8601 date-time", steps: [sleepStep("nap", { until: "2030-01-01T00:00:00Z" })], issues: [] },
    { name: "accepts a sleep until a numeric string", steps: [sleepStep("nap", { until: "1700000000000" })], issues: [] },
    { name: "accepts a sleep until a template of the input", steps: [sleepStep("nap", { until: "{{ input.releaseAt }}" })], issues: [] },
    { name: "accepts a sleep until a template of an upstream step", steps: [step("a"), sleepStep("nap", { until: "{{ steps.a.output.at }}" })], issues: [] },
    { name: "accepts a wait for an event", steps: [waitStep("approval", approval)], issues: [] },
    {
      name: "accepts a when reading an upstream step, on every kind",
      steps: [
        step("a"),
        step("b", { when: "{{ steps.a.output.ok }}" }),
        sleepStep("c", { durationMs: 1 }, { when: "{{ steps.a.output.ok }}" }),
        waitStep("d", approval, { when: "{{ input.needsApproval }}" }),
      ],
      issues: [],
    },
    {
      name: "accepts compensate, retry and timeouts on a sleep and a wait (they apply to the compensation)",
      steps: [
        sleepStep("hold", { durationMs: 1 }, { compensate: httpAction("release"), retry: { maxAttempts: 5 }, timeouts: { heartbeatMs: 2_000 } }),
        waitStep("approval", approval, { compensate: httpAction("revoke", { body: { what: "{{ steps.approval.output }}" } }) }),
      ],
      issues: [],
    },
    {
      name: "refuses a step of no kind",
      steps: [{ id: "nothing" }],
      issues: [{ path: ["steps", 0], message: 'step "nothing" must have exactly one of action, sleep, waitForEvent, map or workflow (it has none)' }],
    },
    {
      name: "refuses a step with an action and a sleep",
      steps: [step("both", { sleep: { durationMs: 1 } })],
      issues: [{ path: ["steps", 0], message: 'step "both" must have exactly one of action, sleep, waitForEvent, map or workflow (it has action and sleep)' }],
    },
    {
      name: "refuses a step of all three kinds",
      steps: [step("all", { sleep: { durationMs: 1 }, waitForEvent: approval })],
      issues: [{ path: ["steps", 0], message: 'step "all" must have exactly one of action, sleep, waitForEvent, map or workflow (it has action and sleep and waitForEvent)' }],
    },
    {
      name: "refuses a sleep and a wait in one step",
      steps: [{ id: "mixed", sleep: { durationMs: 1 }, waitForEvent: approval }],
      issues: [{ path: ["steps", 0], message: 'step "mixed" must have exactly one of action, sleep, waitForEvent, map or workflow (it has sleep and waitForEvent)' }],
    },
    {
      name: "refuses a literal until that is not a time",
      steps: [sleepStep("nap", { until: "tomorrow" })],
      issues: [{ path: ["steps", 0], message: 'step "nap": sleep.until must be epoch milliseconds, an ISO 8601 date-time or a template' }],
    },
    {
      name: "refuses a literal until in another date format",
      steps: [sleepStep("nap", { until: "01/02/2030" })],
      issues: [{ path: ["steps", 0], message: 'step "nap": sleep.until must be epoch milliseconds, an ISO 8601 date-time or a template' }],
    },
    {
      name: "refuses an until reading a step that is not upstream",
      steps: [sleepStep("nap", { until: "{{ steps.b.output.at }}" }), step("b")],
      issues: [{ path: ["steps", 0, "sleep"], message: 'step "nap": template "steps.b.output.at" reads step "b", which is not an upstream step' }],
    },
    {
      name: "refuses an until reading its own step",
      steps: [sleepStep("nap", { until: "{{ steps.nap.output }}" })],
      issues: [{ path: ["steps", 0, "sleep"], message: 'step "nap": template "steps.nap.output" reads step "nap", which is not an upstream step' }],
    },
    {
      name: "refuses a when reading a step that runs in parallel",
      steps: [step("a"), step("b", { dependsOn: [], when: "{{ steps.a.output.ok }}" })],
      issues: [{ path: ["steps", 1, "when"], message: 'step "b": template "steps.a.output.ok" reads step "a", which is not an upstream step' }],
    },
    {
      name: "refuses a when reading its own step",
      steps: [step("a", { when: "{{ steps.a.output }}" })],
      issues: [{ path: ["steps", 0, "when"], message: 'step "a": template "steps.a.output" reads step "a", which is not an upstream step' }],
    },
    {
      name: "refuses a when with an unknown root",
      steps: [step("a", { when: "{{ env.FLAG }}" })],
      issues: [{ path: ["steps", 0, "when"], message: 'step "a": unknown template "env.FLAG": paths start with input, workflow.id or steps.<id>' }],
    },
  ];

  it.each(rows)("$name", ({ steps, issues }) => {
    expect(checkDefinition(definition(steps))).toEqual(issues);
  });
});

describe("DefinitionSchema of the step kinds", () => {
  const rows: { name: string; step: unknown; path: (string | number)[] }[] = [
    { name: "a sleep with both durationMs and until", step: { id: "nap", sleep: { durationMs: 1, until: 1 } }, path: ["steps", 0, "sleep"] },
    { name: "a sleep with neither durationMs nor until", step: { id: "nap", sleep: {} }, path: ["steps", 0, "sleep"] },
    { name: "a negative durationMs", step: { id: "nap", sleep: { durationMs: -1 } }, path: ["steps", 0, "sleep", "durationMs"] },
    { name: "a durationMs past 365 days", step: { id: "nap", sleep: { durationMs: MAX_TIMER_MS + 1 } }, path: ["steps", 0, "sleep", "durationMs"] },
    { name: "a fractional durationMs", step: { id: "nap", sleep: { durationMs: 1.5 } }, path: ["steps", 0, "sleep", "durationMs"] },
    { name: "a negative until", step: { id: "nap", sleep: { until: -5 } }, path: ["steps", 0, "sleep", "until"] },
    { name: "an empty until", step: { id: "nap", sleep: { until: "" } }, path: ["steps", 0, "sleep", "until"] },
    { name: "an unknown field in a sleep", step: { id: "nap", sleep: { durationMs: 1, jitter: 2 } }, path: ["steps", 0, "sleep"] },
    { name: "a wait without timeoutMs", step: { id: "w", waitForEvent: { event: "approved" } }, path: ["steps", 0, "waitForEvent", "timeoutMs"] },
    { name: "a wait with a timeoutMs of 0", step: { id: "w", waitForEvent: { event: "approved", timeoutMs: 0 } }, path: ["steps", 0, "waitForEvent", "timeoutMs"] },
    {
      name: "a wait with a timeoutMs past 365 days",
      step: { id: "w", waitForEvent: { event: "approved", timeoutMs: MAX_TIMER_MS + 1 } },
      path: ["steps", 0, "waitForEvent", "timeoutMs"],
    },
    { name: "a wait for an event name with a space", step: { id: "w", waitForEvent: { event: "is approved", timeoutMs: 1 } }, path: ["steps", 0, "waitForEvent", "event"] },
    {
      name: "a wait with an unknown onTimeout",
      step: { id: "w", waitForEvent: { event: "approved", timeoutMs: 1, onTimeout: "retry" } },
      path: ["steps", 0, "waitForEvent", "onTimeout"],
    },
    { name: "an empty when", step: { ...step("a"), when: "" }, path: ["steps", 0, "when"] },
    { name: "a when that is not a string", step: { ...step("a"), when: true }, path: ["steps", 0, "when"] },
  ];

  it.each(rows)("rejects $name with an issue at its path", ({ step: input, path }) => {
    const parsed = DefinitionSchema.safeParse({ name: "shop", steps: [input] });
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues.map((issue) => issue.path)).toContainEqual(path);
  });

  it("accepts the longest sleep and wait there are: 365 days", () => {
    const parsed = DefinitionSchema.safeParse(
      definition([sleepStep("nap", { durationMs: MAX_TIMER_MS }), waitStep("approval", { event: "approved", timeoutMs: MAX_TIMER_MS, onTimeout: "skip" })]),
    );
    expect(parsed.success).toBe(true);
  });

  it("says which step has no kind in a 400's issues", () => {
    const parsed = DefinitionSchema.safeParse({ name: "shop", steps: [step("a"), { id: "b" }] });
    expect(parsed.error?.issues).toContainEqual(
      expect.objectContaining({ path: ["steps", 1], message: 'step "b" must have exactly one of action, sleep, waitForEvent, map or workflow (it has none)' }),
    );
  });
});

describe("planWorkflow of the step kinds", () => {
  it("keeps each step's kind and its when, with the defaults applied", () => {
    const planned = planWorkflow(
      definition([
        step("a"),
        sleepStep("nap", { until: "{{ steps.a.output.at }}" }, { when: "{{ steps.a.output.wait }}" }),
        waitStep("approval", { ...approval, onTimeout: "skip" }, { compensate: httpAction("revoke") }),
      ]),
    );
    expect(planned.steps).toEqual([
      { id: "a", dependsOn: [], kind: "action", action: httpAction("a"), retry: DEFAULT_RETRY, timeouts: DEFAULT_TIMEOUTS },
      { id: "nap", dependsOn: ["a"], when: "{{ steps.a.output.wait }}", kind: "sleep", sleep: { until: "{{ steps.a.output.at }}" }, retry: DEFAULT_RETRY, timeouts: DEFAULT_TIMEOUTS },
      {
        id: "approval",
        dependsOn: ["nap"],
        kind: "waitForEvent",
        waitForEvent: { event: "approved", timeoutMs: 60_000, onTimeout: "skip" },
        compensate: httpAction("revoke"),
        retry: DEFAULT_RETRY,
        timeouts: DEFAULT_TIMEOUTS,
      },
    ]);
    expect(planned.steps.map((planned) => planned.kind)).toEqual(["action", "sleep", "waitForEvent"]);
  });
});
