/**
 * What a definition means as a whole, past its fields: ids unique, dependencies known and acyclic, templates
 * reading only steps that finish first. `DefinitionSchema` is the shape plus these checks: one parse, one 400.
 */
import { z } from "zod";
import { canonicalJson } from "../security/canonical-json";
import { DefinitionRefSchema, PrioritySchema } from "./primitives";
import { NotifySchema } from "./notify";
import { DefinitionShapeSchema, IdSchema, ItemStepSchema, PayloadSchema, type DefinitionInput, type ItemStepInput, type StepInput } from "./schemas";
import { sha256Hex } from "../security/sha256";
import { checkTemplatePath, templatePaths, templateProblems } from "./templates";
import { sentenceOf } from "../validation-messages";
import { kindsOfStep, MAX_WORKFLOW_DEPTH, STEP_KIND_NAMES, stepKindOf } from "./steps";
import { StartAtSchema, StartDelaySchema } from "./start-time";

export interface DefinitionIssue {
  path: (string | number)[];
  message: string;
}

/** An absent `dependsOn` means "after the previous step", so a plain list runs in order. */
export function dependenciesOf(definition: DefinitionInput, index: number): string[] {
  const step = definition.steps[index];
  if (step?.dependsOn) return step.dependsOn;
  const previous = definition.steps[index - 1];
  return previous ? [previous.id] : [];
}

/**
 * What a schema cannot say about a definition: duplicate ids, unknown or cyclic dependencies, and templates
 * that read a step which cannot have finished first. Each issue names the step's path.
 */
export function checkDefinition(definition: DefinitionInput, depth = 0): DefinitionIssue[] {
  const issues: DefinitionIssue[] = [];
  const indexById = new Map<string, number>();
  definition.steps.forEach((step, index) => {
    if (indexById.has(step.id)) {
      issues.push({ path: ["steps", index, "id"], message: `duplicate step id "${step.id}"` });
    } else {
      indexById.set(step.id, index);
    }
  });
  definition.steps.forEach((step, index) => {
    const kindIssue = checkStepKind(step);
    if (kindIssue) issues.push({ path: ["steps", index], message: kindIssue });
    else issues.push(...nestedIssues(step, ["steps", index], depth));
    if (step.map) issues.push(...checkItemStep(step, index, depth));
    step.dependsOn?.forEach((dependency, position) => {
      if (!indexById.has(dependency)) {
        issues.push({
          path: ["steps", index, "dependsOn", position],
          message: `step "${step.id}" depends on unknown step "${dependency}"`,
        });
      } else if (dependency === step.id) {
        issues.push({ path: ["steps", index, "dependsOn", position], message: `step "${step.id}" depends on itself` });
      }
    });
  });
  if (issues.length > 0) return issues;

  const cycle = findCycle(definition);
  if (cycle) {
    const index = indexById.get(cycle[0] ?? "") ?? 0;
    issues.push({ path: ["steps", index, "dependsOn"], message: `dependency cycle: ${cycle.join(" -> ")}` });
    return issues;
  }
  return checkTemplates(definition);
}

/** Exactly one kind's field (action, sleep, waitForEvent), and what that kind itself finds wrong. */
function checkStepKind(step: StepInput): string | undefined {
  const kinds = kindsOfStep(step);
  const [kind] = kinds;
  if (kind === undefined || kinds.length > 1) {
    const found = kind === undefined ? "none" : kinds.join(" and ");
    return `step "${step.id}" must have exactly one of ${KIND_FIELDS} (it has ${found})`;
  }
  if (step.verify && kind !== "action") return `step "${step.id}": verify belongs to a step with an action`;
  return stepKindOf(kind).check?.(step[kind], step.id);
}

/** Fields a map step leaves to its item step, where each item gets its own. */
const ITEM_FIELDS = ["retry", "timeouts", "compensate", "breaker"] as const;

/** A map's item step: a step's shape without id, dependsOn or when, of one kind but `map`. */
function checkItemStep(step: StepInput, index: number, depth: number): DefinitionIssue[] {
  const at = ["steps", index, "map", "step"];
  const misplaced = ITEM_FIELDS.find((field) => step[field] !== undefined);
  if (misplaced) return [{ path: ["steps", index, misplaced], message: `step "${step.id}": a map's ${misplaced} belongs in map.step, where each item gets its own` }];
  const parsed = ItemStepSchema.safeParse(step.map?.step);
  if (!parsed.success) return parsed.error.issues.map((issue) => ({ path: [...at, ...issue.path.map(pathPart)], message: `step "${step.id}": ${sentenceOf(["map", "step", ...issue.path], issue.message)}` }));
  if (parsed.data.map !== undefined) return [{ path: at, message: `step "${step.id}": a map's item step cannot be a map (put the inner map in a child workflow)` }];
  const item = { ...parsed.data, id: step.id };
  const kindIssue = checkStepKind(item);
  if (kindIssue) return [{ path: at, message: kindIssue.replace(`step "${step.id}"`, `step "${step.id}": map.step`) }];
  return nestedIssues(item, at, depth);
}

/**
 * A child's inline definition is checked as a start's own would be, its issues under the step's path; inline
 * children nest at most MAX_WORKFLOW_DEPTH deep below this definition (the running depth is checked at the start).
 */
function nestedIssues(step: StepInput, stepPath: (string | number)[], depth: number): DefinitionIssue[] {
  const [kind] = kindsOfStep(step);
  const nested = kind === undefined ? undefined : stepKindOf(kind).nestedDefinition?.(step[kind]);
  if (nested === undefined || kind === undefined) return [];
  const at = [...stepPath, kind, "definition"];
  if (depth + 1 > MAX_WORKFLOW_DEPTH) {
    return [{ path: at, message: `step "${step.id}": child workflows nest at most ${MAX_WORKFLOW_DEPTH} deep` }];
  }
  const parsed = DefinitionShapeSchema.safeParse(nested);
  const issues = parsed.success ? checkDefinition(parsed.data, depth + 1) : parsed.error.issues.map((issue) => ({ path: issue.path.map(pathPart), message: issue.message }));
  return issues.map((issue) => ({ path: [...at, ...issue.path], message: issue.message }));
}

function pathPart(part: PropertyKey): string | number {
  return typeof part === "number" ? part : String(part);
}

const KIND_FIELDS = `${STEP_KIND_NAMES.slice(0, -1).join(", ")} or ${STEP_KIND_NAMES.at(-1)}`;

function checkTemplates(definition: DefinitionInput): DefinitionIssue[] {
  const issues: DefinitionIssue[] = [];
  const ancestors = ancestorsByStep(definition);
  definition.steps.forEach((step, index) => {
    const upstream = ancestors.get(step.id) ?? new Set<string>();
    const fields: [keyof typeof step, Set<string>][] = [
      ...STEP_KIND_NAMES.map((kind): [keyof typeof step, Set<string>] => [kind, upstream]),
      ["when", upstream],
      // A compensation runs after its own step succeeded, so it may read that step's output too.
      ["compensate", new Set([...upstream, step.id])],
      ["verify", upstream],
    ];
    for (const [field, visible] of fields) {
      for (const problem of templateIssues(renderedPart(field, step[field]), visible, false)) {
        issues.push({ path: ["steps", index, field], message: `step "${step.id}": ${problem}` });
      }
    }
    if (step.map) issues.push(...checkItemTemplates(step.id, step.map.step as ItemStepInput, index, upstream));
  });
  return issues;
}

/** An item step reads what its map reads, and `item` and `index`; its compensation reads its own output too. */
function checkItemTemplates(stepId: string, item: ItemStepInput, index: number, upstream: Set<string>): DefinitionIssue[] {
  const issues: DefinitionIssue[] = [];
  for (const [field, value] of Object.entries(item)) {
    for (const problem of templateIssues(renderedPart(field, value), field === "compensate" ? new Set([...upstream, stepId]) : upstream, true)) {
      issues.push({ path: ["steps", index, "map", "step", field], message: `step "${stepId}": map.step: ${problem}` });
    }
  }
  return issues;
}

/**
 * What of a step's field the step renders with its templates: a map only its items (its item step is checked on
 * its own, with `item` and `index`), a child workflow its id and input (an inline definition is checked as a
 * definition of its own, whose templates read its own steps).
 */
function renderedPart(field: string, value: unknown): unknown {
  if (value === null || typeof value !== "object") return value;
  if (field === "map") return (value as { items?: unknown }).items;
  if (field === "workflow") return { id: (value as { id?: unknown }).id, input: (value as { input?: unknown }).input };
  return value;
}

/** A mistyped template (a `{{` without its `}}`, a stray `}}`), then every path that can never resolve. */
function templateIssues(value: unknown, visible: ReadonlySet<string>, inItem: boolean): string[] {
  const problems = templateProblems(value);
  for (const path of templatePaths(value)) {
    const problem = checkTemplatePath(path, visible, inItem);
    if (problem) problems.push(problem);
  }
  return problems;
}

function findCycle(definition: DefinitionInput): string[] | undefined {
  const dependencies = new Map(definition.steps.map((step, index) => [step.id, dependenciesOf(definition, index)]));
  const state = new Map<string, "visiting" | "done">();
  const trail: string[] = [];
  const visit = (id: string): string[] | undefined => {
    if (state.get(id) === "done") return undefined;
    if (state.get(id) === "visiting") return [...trail.slice(trail.indexOf(id)), id];
    state.set(id, "visiting");
    trail.push(id);
    for (const dependency of dependencies.get(id) ?? []) {
      const cycle = visit(dependency);
      if (cycle) return cycle;
    }
    trail.pop();
    state.set(id, "done");
    return undefined;
  };
  for (const step of definition.steps) {
    const cycle = visit(step.id);
    if (cycle) return cycle;
  }
  return undefined;
}

function ancestorsByStep(definition: DefinitionInput): Map<string, Set<string>> {
  const dependencies = new Map(definition.steps.map((step, index) => [step.id, dependenciesOf(definition, index)]));
  const memo = new Map<string, Set<string>>();
  const ancestors = (id: string): Set<string> => {
    const known = memo.get(id);
    if (known) return known;
    const result = new Set<string>();
    memo.set(id, result);
    for (const dependency of dependencies.get(id) ?? []) {
      result.add(dependency);
      for (const further of ancestors(dependency)) result.add(further);
    }
    return result;
  };
  for (const step of definition.steps) ancestors(step.id);
  return memo;
}

/** Adds the definition's graph issues to a zod parse, so one 400 lists schema and graph problems alike. */
function refineDefinition(definition: DefinitionInput, ctx: z.RefinementCtx): void {
  for (const issue of checkDefinition(definition)) {
    ctx.addIssue({ code: "custom", path: issue.path, message: issue.message });
  }
}

export const DefinitionSchema = DefinitionShapeSchema.superRefine(refineDefinition);

/**
 * The content hash of a checked definition: hex SHA-256 of its canonical JSON. Equal content gives an equal hash
 * whatever the key order, so a registry version and an inline start of the same definition share it.
 */
export function definitionHash(definition: DefinitionInput): Promise<string> {
  return sha256Hex(canonicalJson(definition));
}

/**
 * Exactly one of the two: a start names what it runs once, and never ambiguously. At most one start time, too.
 */
function refineStartChoices(body: { definition?: unknown; definitionRef?: unknown; startAt?: unknown; startDelayMs?: unknown }, ctx: z.RefinementCtx): void {
  if (body.definition === undefined && body.definitionRef === undefined) {
    ctx.addIssue({ code: "custom", path: ["definition"], message: "give a definition, or a definitionRef naming a published one" });
  } else if (body.definition !== undefined && body.definitionRef !== undefined) {
    ctx.addIssue({ code: "custom", path: ["definitionRef"], message: "give either a definition or a definitionRef, not both" });
  }
  if (body.startAt !== undefined && body.startDelayMs !== undefined) {
    ctx.addIssue({ code: "custom", path: ["startDelayMs"], message: "give either startAt or startDelayMs, not both" });
  }
}

export const StartWorkflowSchema = z
  .strictObject({
    id: IdSchema.optional(),
    /** Inline: the definition itself. */
    definition: DefinitionSchema.optional(),
    /** By reference: a version from the definitions registry (one read more than an inline start). */
    definitionRef: DefinitionRefSchema.optional(),
    input: PayloadSchema.optional(),
    /** Its worker tasks' priority in their pools (1 first, default 3); a step's own `priority` wins. */
    priority: PrioritySchema.optional(),
    /** Within one priority, a pool's tasks of different keys take turns (one customer's 10 000 tasks do not starve another's one). */
    fairnessKey: z.string().min(1).max(128).optional(),
    /** When it ends, its final view is POSTed to `url`, signed with `secret` (Standard Webhooks). */
    notify: NotifySchema.optional(),
    /** Start later, at this time (epoch ms or ISO 8601, at most 365 days ahead): `scheduled` until then. */
    startAt: StartAtSchema.optional(),
    /** Start later, this many milliseconds from now (at most 365 days); not with `startAt`. */
    startDelayMs: StartDelaySchema.optional(),
  })
  .superRefine(refineStartChoices);

export { DefinitionRefSchema };
export type DefinitionRef = z.infer<typeof DefinitionRefSchema>;

export type StartWorkflowInput = z.infer<typeof StartWorkflowSchema>;
