// What a definition may say of a `workflow` step (a child workflow): exactly one of definitionRef or an inline
// definition, a well-formed reference, an id that is an id or a template, an inline definition checked as a
// start's own is (its issues under the step's path), and inline children at most 8 deep.
import { describe, expect, it } from "vitest";
import { checkDefinition, DefinitionSchema } from "../../src/domain/language/definition";
import { planWorkflow } from "../../src/domain/language/plan";
import type { DefinitionInput, StepInput } from "../../src/domain/language/schemas";
import { MAX_WORKFLOW_DEPTH } from "../../src/domain/language/steps";

const child = (workflow: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({ id: "ship", workflow, ...extra }) as StepInput;
const parsed = (steps: unknown[]) => DefinitionSchema.safeParse({ name: "parent", steps });
const issuesOf = (steps: unknown[]) => {
  const result = parsed(steps);
  return result.success ? [] : result.error.issues.map((issue) => ({ path: issue.path, message: issue.message }));
};

/** An inline definition whose only step starts the next one down, `levels` deep below it. */
function nested(levels: number): Record<string, unknown> {
  let definition: Record<string, unknown> = { name: "leaf", steps: [{ id: "nap", sleep: { durationMs: 1 } }] };
  for (let level = 0; level < levels; level++) definition = { name: `level-${level}`, steps: [{ id: "down", workflow: { definition } }] };
  return definition;
}

describe("a workflow step in a definition", () => {
  it.each([
    ["a definitionRef by name", { definitionRef: { name: "shipping" } }],
    ["a definitionRef with a version, a templated input and id, and onParentClose", { definitionRef: { name: "shipping", version: 2 }, input: { order: "{{ input.order }}" }, id: "ship-{{ input.order }}", onParentClose: "abandon" }],
    ["an inline definition", { definition: { name: "inline", steps: [{ id: "a", sleep: { durationMs: 1 } }] } }],
  ])("accepts %s", (_name, workflow) => {
    expect(issuesOf([child(workflow)])).toEqual([]);
  });

  it.each([
    ["neither a definitionRef nor a definition", {}, "a workflow step needs exactly one of definitionRef or definition"],
    ["both", { definitionRef: { name: "shipping" }, definition: { name: "x", steps: [] } }, "a workflow step needs exactly one of definitionRef or definition"],
    ["a definitionRef without a name", { definitionRef: { version: 2 } }, undefined],
    ["a definitionRef whose name is no id", { definitionRef: { name: "no spaces" } }, undefined],
    ["a definitionRef with version 0", { definitionRef: { name: "shipping", version: 0 } }, undefined],
    ["a definitionRef with a field it does not have", { definitionRef: { name: "shipping", latest: true } }, undefined],
    ["an onParentClose it does not know", { definitionRef: { name: "shipping" }, onParentClose: "detach" }, undefined],
  ])("refuses %s, naming the step's field", (_name, workflow, message) => {
    const issues = issuesOf([child(workflow)]);
    expect(issues.length).toBeGreaterThan(0);
    expect(issues[0]!.path.slice(0, 3)).toEqual(["steps", 0, "workflow"]);
    if (message) expect(issues[0]!.message).toBe(message);
  });

  it("refuses a literal id that is no workflow id, and a template reading no upstream step", () => {
    expect(issuesOf([child({ definitionRef: { name: "shipping" }, id: "has spaces" })])).toEqual([
      { path: ["steps", 0], message: expect.stringContaining('step "ship": workflow.id must match') },
    ]);
    expect(issuesOf([child({ definitionRef: { name: "shipping" }, input: { x: "{{ steps.later.output }}" } })])[0]).toMatchObject({ path: ["steps", 0, "workflow"] });
  });

  it("checks an inline definition as a start's own, its issues under the step's path", () => {
    const bad = { name: "inline", steps: [{ id: "a", dependsOn: ["ghost"], sleep: { durationMs: 1 } }] };
    expect(issuesOf([child({ definition: bad })])).toEqual([
      { path: ["steps", 0, "workflow", "definition", "steps", 0, "dependsOn", 0], message: 'step "a" depends on unknown step "ghost"' },
    ]);
    expect(issuesOf([child({ definition: { name: "inline", steps: "none" } })])[0]!.path).toEqual(["steps", 0, "workflow", "definition", "steps"]);
  });

  it(`nests inline children at most ${MAX_WORKFLOW_DEPTH} deep`, () => {
    expect(checkDefinition({ name: "root", steps: [child({ definition: nested(MAX_WORKFLOW_DEPTH - 1) })] } as DefinitionInput)).toEqual([]);
    const tooDeep = checkDefinition({ name: "root", steps: [child({ definition: nested(MAX_WORKFLOW_DEPTH) })] } as DefinitionInput);
    expect(tooDeep).toHaveLength(1);
    expect(tooDeep[0]!.message).toBe(`step "down": child workflows nest at most ${MAX_WORKFLOW_DEPTH} deep`);
  });

  it("plans the step with its fields as written, and notes whether its own retry may retry the child", () => {
    const plan = planWorkflow({ name: "p", steps: [child({ definitionRef: { name: "shipping" } }), child({ definitionRef: { name: "s" } }, { id: "again", retry: { maxAttempts: 2 } })] });
    expect(plan.steps[0]).toMatchObject({ kind: "workflow", workflow: { definitionRef: { name: "shipping" } } });
    expect(plan.steps[0]).not.toHaveProperty("retriesChild");
    expect(plan.steps[1]).toMatchObject({ kind: "workflow", retriesChild: true });
  });
});
