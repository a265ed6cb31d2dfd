/**
 * What `{{ path }}` templates in a definition's strings read, and their values when a step starts. A string that is
 * exactly one template takes the value's own JSON type; otherwise values are interpolated as text. How a string
 * splits into text and templates is template-syntax.ts.
 */
import { parseTemplate, type TemplatePiece } from "./template-syntax";

/** The template a definition checked before mistyped ones were refused may still hold: see `renderString`. */
const LENIENT_TEMPLATE = /\{\{\s*([^{}]*?)\s*\}\}/g;

export interface TemplateContext {
  input: unknown;
  workflow: { id: string };
  steps: Record<string, { output?: unknown; attempt: number }>;
  /** Inside a map's item step: the item at hand and its position. */
  item?: unknown;
  index?: number;
}

export class TemplateError extends Error {}

/** Every template path in a value, e.g. `steps.charge.output.id` (none of a string that `templateProblems` refuses). */
export function templatePaths(value: unknown): string[] {
  const paths: string[] = [];
  visitStrings(value, (text) => {
    const parsed = parseTemplate(text);
    if (parsed.ok) for (const piece of parsed.pieces) if ("path" in piece) paths.push(piece.path);
  });
  return paths;
}

/** Why the strings of a value are no text with templates: a `{{` without its `}}`, a stray `}}`. */
export function templateProblems(value: unknown): string[] {
  const problems: string[] = [];
  visitStrings(value, (text) => {
    const parsed = parseTemplate(text);
    if (!parsed.ok) problems.push(parsed.problem);
  });
  return problems;
}

/**
 * Why a path can never resolve, or undefined when it may. `visibleSteps` are the steps it may read; `inItem`: the
 * template belongs to a map's item step, which may read `item` (and below) and `index` too.
 */
export function checkTemplatePath(path: string, visibleSteps: ReadonlySet<string>, inItem = false): string | undefined {
  const parts = path.split(".");
  const [root, second, third] = parts;
  if (root === "input") return undefined;
  if (inItem && (root === "item" || path === "index")) return undefined;
  if (root === "workflow") return path === "workflow.id" ? undefined : `unknown template "${path}": only workflow.id exists`;
  if (root === "steps") {
    if (!second || !visibleSteps.has(second)) {
      return `template "${path}" reads step "${second ?? ""}", which is not an upstream step`;
    }
    if (third === "output" || (third === "attempt" && parts.length === 3)) return undefined;
    return `template "${path}" must read steps.<id>.output or steps.<id>.attempt`;
  }
  const item = inItem ? ", item, index" : "";
  return `unknown template "${path}": paths start with input, workflow.id${item} or steps.<id>`;
}

export function renderTemplates(value: unknown, context: TemplateContext): unknown {
  if (typeof value === "string") return renderString(value, context);
  if (Array.isArray(value)) return value.map((item) => renderTemplates(item, context));
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, renderTemplates(v, context)]));
  }
  return value;
}

function renderString(text: string, context: TemplateContext): unknown {
  const parsed = parseTemplate(text);
  // A workflow started before mistyped templates were refused runs on as it began: its well-formed templates
  // rendered, the rest of the string sent as it stands.
  if (!parsed.ok) return text.replace(LENIENT_TEMPLATE, (_, path: string) => asText(resolvePath(path, context)));
  const [only] = parsed.pieces;
  if (parsed.pieces.length === 1 && only && "path" in only) return resolvePath(only.path, context);
  return parsed.pieces.map((piece: TemplatePiece) => ("path" in piece ? asText(resolvePath(piece.path, context)) : piece.text)).join("");
}

function asText(value: unknown): string {
  return typeof value === "string" ? value : JSON.stringify(value);
}

function resolvePath(path: string, context: TemplateContext): unknown {
  let current: unknown = context;
  for (const part of path.split(".")) {
    if (current === null || typeof current !== "object" || !Object.hasOwn(current, part)) {
      throw new TemplateError(`template "${path}" has no value`);
    }
    current = (current as Record<string, unknown>)[part];
  }
  if (current === undefined) throw new TemplateError(`template "${path}" has no value`);
  return current;
}

/** Iterative, so a value nested deeper than the stack (refused elsewhere, but still seen here) cannot crash it. */
function visitStrings(value: unknown, visit: (text: string) => void): void {
  const pending: unknown[] = [value];
  while (pending.length > 0) {
    const current = pending.pop();
    if (typeof current === "string") visit(current);
    else if (Array.isArray(current)) for (let i = current.length - 1; i >= 0; i--) pending.push(current[i]);
    else if (current !== null && typeof current === "object") {
      const values = Object.values(current);
      for (let i = values.length - 1; i >= 0; i--) pending.push(values[i]);
    }
  }
}
