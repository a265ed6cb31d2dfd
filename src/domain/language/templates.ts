/**
 * `{{ path }}` templates inside action urls, headers and bodies. A string that is exactly one template takes
 * the value's own JSON type; otherwise values are interpolated as text.
 */

const TEMPLATE = /\{\{\s*([^{}]*?)\s*\}\}/g;
const WHOLE_TEMPLATE = /^\{\{\s*([^{}]*?)\s*\}\}$/;

export interface TemplateContext {
  input: unknown;
  workflow: { id: string };
  steps: Record<string, { output?: unknown; attempt: number }>;
  /** Inside a map's item step: the item at hand and its position. */
  item?: unknown;
  index?: number;
}

export class TemplateError extends Error {}

/** Every template path in a value, e.g. `steps.charge.output.id`. */
export function templatePaths(value: unknown): string[] {
  const paths: string[] = [];
  visitStrings(value, (text) => {
    for (const match of text.matchAll(TEMPLATE)) paths.push(match[1] ?? "");
  });
  return paths;
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
  const whole = WHOLE_TEMPLATE.exec(text);
  if (whole) return resolvePath(whole[1] ?? "", context);
  return text.replace(TEMPLATE, (_, path: string) => {
    const resolved = resolvePath(path, context);
    return typeof resolved === "string" ? resolved : JSON.stringify(resolved);
  });
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
