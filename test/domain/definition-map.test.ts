import { describe, expect, it } from "vitest";
import { checkDefinition, DefinitionSchema } from "../../src/domain/language/definition";
import type { DefinitionInput } from "../../src/domain/language/schemas";
import { httpAction, mapStep, plan, step } from "./builders";

const definitionWith = (...steps: unknown[]): DefinitionInput => ({ name: "maps", steps }) as DefinitionInput;
const problems = (definition: DefinitionInput) => {
  const parsed = DefinitionSchema.safeParse(definition);
  return parsed.success ? [] : parsed.error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`);
};

describe("a map step in a definition", () => {
  it.each<[string, unknown, string]>([
    ["a map inside a map", mapStep("m", [], { step: { map: { items: [], step: { action: httpAction("x") } } } }), "steps.0.map.step: step \"m\": a map's item step cannot be a map"],
    ["an item step with an id", mapStep("m", [], { step: { id: "x", action: httpAction("x") } }), "steps.0.map.step: step \"m\": map.step has an unknown field \"id\""],
    ["an item step of no kind", mapStep("m", [], { step: {} }), "must have exactly one of"],
    ["a compensate on the map itself", mapStep("m", [], {}, { compensate: httpAction("undo") }), "steps.0.compensate: step \"m\": a map's compensate belongs in map.step"],
    ["both tolerances", mapStep("m", [], { toleratedFailures: 1, toleratedFailurePercent: 5 }), "give toleratedFailures or toleratedFailurePercent, not both"],
    ["maxConcurrency over 1 000", mapStep("m", [], { maxConcurrency: 1001 }), "steps.0.map.maxConcurrency"],
    ["an item template outside an item", step("a", { action: httpAction("a", { body: "{{ item }}" }) }), "unknown template \"item\""],
    ["an item template reading a later step", mapStep("m", [], { step: { action: httpAction("m", { body: "{{ steps.later.output }}" }) } }), "reads step \"later\", which is not an upstream step"],
  ])("refuses %s with a 400 naming it", (_what, mapDefinition, expected) => {
    const found = problems(definitionWith(mapDefinition, step("later")));
    expect(found.join("\n")).toContain(expected);
  });

  it("accepts item and index in the item step, and plans the item step with the definition's defaults", () => {
    const definition = definitionWith(step("first"), mapStep("m", "{{ steps.first.output.list }}", { step: { action: httpAction("m", { body: { src: "{{ item.url }}", n: "{{ index }}" } }), compensate: httpAction("m/undo") } }));
    expect(checkDefinition(definition)).toEqual([]);
    const planned = plan(definition.steps);
    expect(planned.steps[1]).toMatchObject({ id: "m", kind: "map", map: { items: "{{ steps.first.output.list }}", maxConcurrency: 10 } });
    expect(planned.itemSteps?.m).toMatchObject({ id: "m", kind: "action", dependsOn: [], compensate: httpAction("m/undo"), retry: { maxAttempts: 3 } });
  });
});

describe("a map of child workflows in a definition", () => {
  it("checks an inline child definition of the item step with the parent's, its issues under map.step", () => {
    const found = problems(definitionWith(mapStep("m", [], { step: { workflow: { definition: { name: "child", steps: [{ id: "a", action: httpAction("a", { body: "{{ steps.nope.output }}" }) }] } } } })));
    expect(found.join("\n")).toContain("steps.0.map.step.workflow.definition.steps.0.action");
  });
});
