import { describe, expect, it } from "vitest";
import { checkDefinition, DefinitionSchema, StartWorkflowSchema } from "../../src/domain/language/definition";
import { planWorkflow } from "../../src/domain/language/plan";
import { DEFAULT_RETRY, DEFAULT_TIMEOUTS } from "../../src/domain/language/retry-policy";
import type { DefinitionInput, StepInput } from "../../src/domain/language/schemas";
import { httpAction, mapStep, step, undoable } from "./builders";

/** How a literal `{{` or `}}` is written: every problem with a stray one says it. */
const ESCAPES = `for a literal "{{" write {{ '{{' }}, for "}}" write {{ '}}' }}`;

function definition(steps: StepInput[], fields: Partial<DefinitionInput> = {}): DefinitionInput {
  return { name: "shop", steps, ...fields };
}

/** A step whose action body holds one template. */
function reading(id: string, template: string, fields: Partial<StepInput> = {}): StepInput {
  return step(id, { action: httpAction(id, { body: { value: template } }), ...fields });
}

describe("checkDefinition", () => {
  const rows: { name: string; steps: StepInput[]; issues: { path: (string | number)[]; message: string }[] }[] = [
    { name: "accepts a plain list of steps", steps: [step("a"), step("b")], issues: [] },
    {
      name: "names a duplicate step id at its second occurrence",
      steps: [step("a"), step("b"), step("a")],
      issues: [{ path: ["steps", 2, "id"], message: 'duplicate step id "a"' }],
    },
    {
      name: "names a dependency on a step that does not exist",
      steps: [step("a"), step("b", { dependsOn: ["a", "ghost"] })],
      issues: [{ path: ["steps", 1, "dependsOn", 1], message: 'step "b" depends on unknown step "ghost"' }],
    },
    {
      name: "names a step that depends on itself",
      steps: [step("a", { dependsOn: ["a"] })],
      issues: [{ path: ["steps", 0, "dependsOn", 0], message: 'step "a" depends on itself' }],
    },
    {
      name: "names every step of a dependency cycle",
      steps: [step("a", { dependsOn: ["c"] }), step("b", { dependsOn: ["a"] }), step("c", { dependsOn: ["b"] })],
      issues: [{ path: ["steps", 0, "dependsOn"], message: "dependency cycle: a -> c -> b -> a" }],
    },
    {
      name: "finds a cycle closed through an implicit dependency on the previous step",
      steps: [step("a", { dependsOn: ["b"] }), step("b")],
      issues: [{ path: ["steps", 0, "dependsOn"], message: "dependency cycle: a -> b -> a" }],
    },
    {
      name: "refuses a template reading a step that runs in parallel",
      steps: [step("a"), reading("b", "{{ steps.a.output.id }}", { dependsOn: [] })],
      issues: [
        {
          path: ["steps", 1, "action"],
          message: 'step "b": template "steps.a.output.id" reads step "a", which is not an upstream step',
        },
      ],
    },
    {
      name: "refuses a template reading a later step",
      steps: [reading("a", "{{ steps.b.output }}"), step("b")],
      issues: [{ path: ["steps", 0, "action"], message: 'step "a": template "steps.b.output" reads step "b", which is not an upstream step' }],
    },
    {
      name: "refuses an action reading its own step's output",
      steps: [reading("a", "{{ steps.a.output.id }}")],
      issues: [{ path: ["steps", 0, "action"], message: 'step "a": template "steps.a.output.id" reads step "a", which is not an upstream step' }],
    },
    {
      name: "allows a compensation to read its own step's output",
      steps: [step("a", { compensate: httpAction("refund", { body: { charge: "{{ steps.a.output.id }}" } }) })],
      issues: [],
    },
    {
      name: "refuses a compensation reading a step that is not upstream",
      steps: [step("a", { compensate: httpAction("refund", { body: { x: "{{ steps.b.output }}" } }) }), step("b")],
      issues: [{ path: ["steps", 0, "compensate"], message: 'step "a": template "steps.b.output" reads step "b", which is not an upstream step' }],
    },
    {
      name: "allows reading any step upstream, however far",
      steps: [step("a"), step("b"), reading("c", "{{ steps.a.output.id }} after {{ steps.b.attempt }}")],
      issues: [],
    },
    {
      name: "refuses a template with an unknown root",
      steps: [reading("a", "{{ env.SECRET }}")],
      issues: [{ path: ["steps", 0, "action"], message: 'step "a": unknown template "env.SECRET": paths start with input, workflow.id or steps.<id>' }],
    },
    {
      name: "checks templates in the url and headers too",
      steps: [step("a"), step("b", { action: { type: "http", url: "https://x.example/{{ workflow.name }}", headers: { "X-Ref": "{{ steps.a.status }}" } } })],
      issues: [
        { path: ["steps", 1, "action"], message: 'step "b": unknown template "workflow.name": only workflow.id exists' },
        { path: ["steps", 1, "action"], message: 'step "b": template "steps.a.status" must read steps.<id>.output or steps.<id>.attempt' },
      ],
    },
    {
      name: "refuses a template one brace short at its end, naming the field",
      steps: [reading("a", "{{ input.amount }")],
      issues: [{ path: ["steps", 0, "action"], message: `step "a": template "{{ input.amount }" is not closed by "}}" (${ESCAPES})` }],
    },
    {
      name: "refuses a template one brace short at its start",
      steps: [reading("a", "{ input.amount }}")],
      issues: [{ path: ["steps", 0, "action"], message: `step "a": "}}" closes no template in "{ input.amount }}" (${ESCAPES})` }],
    },
    {
      name: "refuses a {{ without its }} in a url",
      steps: [step("a", { action: httpAction("orders/{{ workflow.id") })],
      issues: [{ path: ["steps", 0, "action"], message: `step "a": template "{{ workflow.id" is not closed by "}}" (${ESCAPES})` }],
    },
    {
      name: "refuses a stray }} in a header",
      steps: [step("a", { action: httpAction("a", { headers: { "X-Note": "done }}" } }) })],
      issues: [{ path: ["steps", 0, "action"], message: `step "a": "}}" closes no template in "done }}" (${ESCAPES})` }],
    },
    {
      name: "refuses a mistyped template in when",
      steps: [step("a"), step("b", { when: "{{ steps.a.output.ok }" })],
      issues: [{ path: ["steps", 1, "when"], message: `step "b": template "{{ steps.a.output.ok }" is not closed by "}}" (${ESCAPES})` }],
    },
    {
      name: "refuses a mistyped template in a compensation",
      steps: [step("a", { compensate: httpAction("refund", { body: { charge: "{{ steps.a.output.id }" } }) })],
      issues: [{ path: ["steps", 0, "compensate"], message: `step "a": template "{{ steps.a.output.id }" is not closed by "}}" (${ESCAPES})` }],
    },
    {
      name: "refuses a mistyped template in a map's item step",
      steps: [mapStep("m", "{{ input.list }}", { step: { action: httpAction("m", { body: { src: "{{ item.url }" } }) } })],
      issues: [{ path: ["steps", 0, "map", "step", "action"], message: `step "m": map.step: template "{{ item.url }" is not closed by "}}" (${ESCAPES})` }],
    },
    {
      name: "refuses a mistyped template in a child workflow's input",
      steps: [step("ship", { action: undefined, workflow: { definitionRef: { name: "shipping" }, input: { order: "{{ input.order }" } } })],
      issues: [{ path: ["steps", 0, "workflow"], message: `step "ship": template "{{ input.order }" is not closed by "}}" (${ESCAPES})` }],
    },
    {
      name: "accepts a literal {{ and }} written as quoted templates",
      steps: [reading("a", "{{ '{{' }} not a template {{ '}}' }}")],
      issues: [],
    },
    {
      name: "leaves an inline child definition's templates to its own check, which reads the child's steps",
      steps: [step("ship", { action: undefined, workflow: { definition: { name: "child", steps: [step("a"), reading("b", "{{ steps.a.output.id }}")] } } })],
      issues: [],
    },
  ];

  it.each(rows)("$name", ({ steps, issues }) => {
    expect(checkDefinition(definition(steps))).toEqual(issues);
  });
});

describe("DefinitionSchema", () => {
  const valid = definition([undoable("charge", { retry: { maxAttempts: 5 }, timeouts: { heartbeatMs: 10_000 } }), step("ship")], {
    onFailure: "escalate",
    timeoutMs: 60_000,
    defaults: { retry: { jitter: 0 } },
  });

  it("accepts a complete definition as written", () => {
    const parsed = DefinitionSchema.safeParse(valid);
    expect(parsed.success).toBe(true);
    expect(parsed.data).toEqual(valid);
  });

  const rows: { name: string; input: unknown; path: (string | number)[] }[] = [
    { name: "a name that starts with a dash", input: { ...valid, name: "-shop" }, path: ["name"] },
    { name: "a step id with a space", input: { ...valid, steps: [step("bad id")] }, path: ["steps", 0, "id"] },
    { name: "a step id longer than 128 characters", input: { ...valid, steps: [step("a".repeat(129))] }, path: ["steps", 0, "id"] },
    { name: "a definition without steps", input: { name: "shop" }, path: ["steps"] },
    { name: "a definition with an empty step list", input: { name: "shop", steps: [] }, path: ["steps"] },
    { name: "a step of no kind", input: { name: "shop", steps: [{ id: "a" }] }, path: ["steps", 0] },
    { name: "an unknown field at the top", input: { ...valid, owner: "me" }, path: [] },
    { name: "an unknown field in a step", input: { name: "shop", steps: [{ ...step("a"), unless: "always" }] }, path: ["steps", 0] },
    { name: "an unknown field in a retry policy", input: { name: "shop", steps: [{ ...step("a"), retry: { tries: 3 } }] }, path: ["steps", 0, "retry"] },
    { name: "an unknown onFailure", input: { ...valid, onFailure: "ignore" }, path: ["onFailure"] },
    { name: "an action type other than http", input: { name: "shop", steps: [{ id: "a", action: { type: "grpc", url: "x" } }] }, path: ["steps", 0, "action", "type"] },
    { name: "a maxAttempts of zero", input: { name: "shop", steps: [step("a", { retry: { maxAttempts: 0 } })] }, path: ["steps", 0, "retry", "maxAttempts"] },
    { name: "a status in both retry lists", input: { name: "shop", steps: [step("a", { retry: { retryableStatuses: [404, 409], nonRetryableStatuses: [500, 409] } })] }, path: ["steps", 0, "retry", "nonRetryableStatuses", 1] },
    { name: "a status in both lists of the defaults", input: { name: "shop", defaults: { retry: { retryableStatuses: [404], nonRetryableStatuses: [404] } }, steps: [step("a")] }, path: ["defaults", "retry", "nonRetryableStatuses", 0] },
    { name: "a retryable status under 100", input: { name: "shop", steps: [step("a", { retry: { retryableStatuses: [99] } })] }, path: ["steps", 0, "retry", "retryableStatuses", 0] },
    { name: "a non-retryable status over 599", input: { name: "shop", steps: [step("a", { retry: { nonRetryableStatuses: [409, 600] } })] }, path: ["steps", 0, "retry", "nonRetryableStatuses", 1] },
    { name: "a status that is not an integer", input: { name: "shop", steps: [step("a", { retry: { retryableStatuses: [404.5] } })] }, path: ["steps", 0, "retry", "retryableStatuses", 0] },
    { name: "a status list that is not a list", input: { name: "shop", steps: [{ ...step("a"), retry: { retryableStatuses: 404 } }] }, path: ["steps", 0, "retry", "retryableStatuses"] },
    { name: "more than 200 steps", input: { name: "shop", steps: Array.from({ length: 201 }, (_, i) => step(`s${i}`)) }, path: ["steps"] },
    { name: "a duplicate step id", input: { name: "shop", steps: [step("a"), step("a")] }, path: ["steps", 1, "id"] },
    { name: "a dependency cycle", input: { name: "shop", steps: [step("a", { dependsOn: ["b"] }), step("b")] }, path: ["steps", 0, "dependsOn"] },
  ];

  it.each(rows)("rejects $name with an issue at its path", ({ input, path }) => {
    const parsed = DefinitionSchema.safeParse(input);
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues.map((issue) => issue.path)).toContainEqual(path);
  });

  it("says which status is in both retry lists", () => {
    const parsed = DefinitionSchema.safeParse({ name: "shop", steps: [step("a", { retry: { retryableStatuses: [404], nonRetryableStatuses: [404] } })] });
    expect(parsed.error?.issues).toEqual([expect.objectContaining({ message: "cannot be in retryableStatuses too: 404 is retried or not, never both" })]);
  });

  it("accepts disjoint retry lists, and an empty one", () => {
    const retry = { retryableStatuses: [404, 425], nonRetryableStatuses: [409, 503] };
    expect(DefinitionSchema.safeParse({ name: "shop", steps: [step("a", { retry }), step("b", { retry: { retryableStatuses: [] } })] }).success).toBe(true);
  });

  it("names the unknown field it rejects", () => {
    const parsed = DefinitionSchema.safeParse({ ...valid, owner: "me" });
    expect(parsed.error?.issues).toEqual([expect.objectContaining({ code: "unrecognized_keys", keys: ["owner"] })]);
  });

  it("accepts exactly 200 steps and a 128-character id", () => {
    const steps = Array.from({ length: 200 }, (_, i) => step(i === 0 ? "a".repeat(128) : `s${i}`));
    expect(DefinitionSchema.safeParse({ name: "shop", steps }).success).toBe(true);
  });

  it("reports a malformed step list as an issue instead of throwing", () => {
    expect(() => DefinitionSchema.safeParse({ name: "shop", steps: "all of them" })).not.toThrow();
    expect(DefinitionSchema.safeParse({ name: "shop", steps: "all of them" }).success).toBe(false);
  });
});

describe("StartWorkflowSchema", () => {
  const body = { id: "order-1", definition: definition([step("a")]), input: { amount: 42 } };

  it("accepts a start request with or without an id and input", () => {
    expect(StartWorkflowSchema.safeParse(body).success).toBe(true);
    expect(StartWorkflowSchema.safeParse({ definition: body.definition }).success).toBe(true);
  });

  const rows: { name: string; input: unknown; path: (string | number)[] }[] = [
    { name: "a workflow id with a slash", input: { ...body, id: "order/1" }, path: ["id"] },
    { name: "a request without a definition", input: { id: "order-1" }, path: ["definition"] },
    { name: "an unknown field", input: { ...body, tenant: "other" }, path: [] },
    { name: "a definition problem", input: { ...body, definition: definition([step("a", { dependsOn: ["zz"] })]) }, path: ["definition", "steps", 0, "dependsOn", 0] },
  ];

  it.each(rows)("rejects $name with an issue at its path", ({ input, path }) => {
    const parsed = StartWorkflowSchema.safeParse(input);
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues.map((issue) => issue.path)).toContainEqual(path);
  });
});

describe("planWorkflow", () => {
  it("fills in the contract's defaults", () => {
    const planned = planWorkflow(definition([step("a")]));

    expect(planned).toEqual({
      name: "shop",
      onFailure: "compensate",
      steps: [{ id: "a", dependsOn: [], kind: "action", action: httpAction("a"), retry: DEFAULT_RETRY, timeouts: DEFAULT_TIMEOUTS }],
    });
    expect(DEFAULT_RETRY).toEqual({ maxAttempts: 3, initialIntervalMs: 1000, backoffCoefficient: 2, maxIntervalMs: 60_000, jitter: 0.2 });
    // No schedule-to-start by default: waiting in our own queue is not the attempt failing (as in Temporal).
    expect(DEFAULT_TIMEOUTS).toEqual({ startToCloseMs: 300_000, heartbeatMs: 30_000 });
  });

  it("makes each step without dependsOn depend on the one before it", () => {
    const planned = planWorkflow(definition([step("a"), step("b"), step("c", { dependsOn: ["a"] }), step("d")]));
    expect(planned.steps.map((s) => s.dependsOn)).toEqual([[], ["a"], ["a"], ["c"]]);
  });

  it("lets a step's own retry and timeouts win over the definition's defaults, field by field", () => {
    const planned = planWorkflow(
      definition([undoable("a", { retry: { maxAttempts: 7 }, timeouts: { heartbeatMs: 5_000 } })], {
        timeoutMs: 1_000,
        defaults: { retry: { maxAttempts: 4, initialIntervalMs: 10 }, timeouts: { heartbeatMs: 9_000, startToCloseMs: 20_000 } },
      }),
    );
    const [a] = planned.steps;

    expect(planned.timeoutMs).toBe(1_000);
    expect(a?.retry).toEqual({ ...DEFAULT_RETRY, maxAttempts: 7, initialIntervalMs: 10 });
    expect(a?.timeouts).toEqual({ ...DEFAULT_TIMEOUTS, heartbeatMs: 5_000, startToCloseMs: 20_000 });
    expect(a?.compensate).toEqual(httpAction("a/undo"));
  });
});
