// `npm run lint` runs this after eslint: the layering of src/ stays what docs/architecture.md says.
//   - no import cycle among src/ modules (a reader can follow every module in one direction);
//   - src/domain/ imports only pure libraries (zod; croner, cron arithmetic with no I/O) and other domain modules
//     (pure: no cloudflare:*, hono or bindings);
//   - nothing outside src/api/ imports src/api/, and only src/index.ts imports the Worker's entry points.
//   - src/client/ imports at run time only hono/client and its own modules (it takes api/ route types with `import type`).
//   - src/cli/ (run by Node) imports at run time only node:*, yaml, src/client/ and its own modules.
//   - src/domain/contract.ts, the words every side shares, imports nothing; the client and the CLI may import it.
// Prints each problem and exits 1 when there is one.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const src = join(root, "src");

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return path.endsWith(".ts") && !path.endsWith(".d.ts") ? [path] : [];
  });
}

/** Import and re-export specifiers of a module, type-only ones included: a cycle of types is a cycle to read. */
function specifiers(text: string): string[] {
  return [...text.matchAll(/^\s*(?:import|export)\s[^;]*?from\s+"([^"]+)"/gms)].map((match) => match[1] ?? "");
}

/** Libraries the pure domain may use: computation only, no I/O and no bindings. */
const PURE_LIBRARIES = new Set(["zod", "croner"]);

/** The typed client also runs outside the Worker (Node): at run time it needs only hono's client and its own modules. */
const CLIENT_LIBRARIES = new Set(["hono/client"]);

/** The command line runs in Node on the typed client: nothing of the Worker's side is in its bundle. */
const CLI_LIBRARIES = new Set(["yaml"]);

/** Specifiers of statements that are not `import type`/`export type`: what is still there once built. */
function runtimeSpecifiers(text: string): Set<string> {
  return new Set([...text.matchAll(/^\s*(?:import|export)\s+(?!type\s)[^;]*?from\s+"([^"]+)"/gms)].map((match) => match[1] ?? ""));
}

const name = (path: string): string => relative(root, path);

/** A leaf Node loads as it is and the dashboard gets a copy of (scripts/generate-contract.ts). */
const CONTRACT = join(src, "domain", "contract.ts");

/** Which layer a module is in, for the rules below. */
interface Place {
  file: string;
  inDomain: boolean;
  inClient: boolean;
  inCli: boolean;
  /** The specifiers still there once built. */
  atRunTime: Set<string>;
}

/** The problems of one import of a library (a bare specifier). */
function libraryProblems({ file, inDomain, inClient, inCli, atRunTime }: Place, spec: string): string[] {
  const problems: string[] = [];
  if (inCli && atRunTime.has(spec) && !spec.startsWith("node:") && !CLI_LIBRARIES.has(spec)) {
    problems.push(`${name(file)} imports "${spec}": cli/ imports only node:*, ${[...CLI_LIBRARIES].join(", ")} and client/ at run time`);
  }
  if (inClient && atRunTime.has(spec) && !CLIENT_LIBRARIES.has(spec)) {
    problems.push(`${name(file)} imports "${spec}": client/ imports only ${[...CLIENT_LIBRARIES].join(" and ")} at run time`);
  }
  if (inDomain && !PURE_LIBRARIES.has(spec)) problems.push(`${name(file)} imports "${spec}": domain/ imports only ${[...PURE_LIBRARIES].join(" and ")}`);
  return problems;
}

/** The problems of one import of a module of src/ (`target`, resolved). */
function moduleProblems({ file, inDomain, inClient, inCli, atRunTime }: Place, spec: string, target: string): string[] {
  const problems: string[] = [];
  if (inCli && atRunTime.has(spec) && target !== CONTRACT && !target.startsWith(join(src, "cli") + sep) && !target.startsWith(join(src, "client") + sep)) {
    problems.push(`${name(file)} imports ${name(target)}: cli/ imports only client/ and its own modules at run time`);
  }
  if (inDomain && !target.startsWith(join(src, "domain"))) problems.push(`${name(file)} imports ${name(target)}: domain/ depends on nothing outside it`);
  if (inClient && atRunTime.has(spec) && target !== CONTRACT && !target.startsWith(join(src, "client"))) {
    problems.push(`${name(file)} imports ${name(target)}: client/ imports only its own modules at run time`);
  }
  // src/client/ takes the server's route types from api/ (erased when built), and nothing else of the server.
  const typesForClient = inClient && !atRunTime.has(spec);
  if (target.startsWith(join(src, "api")) && !file.startsWith(join(src, "api")) && file !== join(src, "index.ts") && !typesForClient) {
    problems.push(`${name(file)} imports ${name(target)}: nothing imports api/`);
  }
  return problems;
}

const files = sourceFiles(src);
const graph = new Map<string, string[]>();
const problems: string[] = [];
for (const file of files) {
  const targets: string[] = [];
  const text = readFileSync(file, "utf8");
  const place: Place = {
    file,
    inDomain: file.startsWith(join(src, "domain")),
    inClient: file.startsWith(join(src, "client")),
    inCli: file.startsWith(join(src, "cli") + sep),
    atRunTime: runtimeSpecifiers(text),
  };
  for (const spec of specifiers(text)) {
    if (file === CONTRACT) problems.push(`${name(file)} imports "${spec}": it imports nothing`);
    if (!spec.startsWith(".")) {
      problems.push(...libraryProblems(place, spec));
      continue;
    }
    const target = resolve(dirname(file), spec) + ".ts";
    problems.push(...moduleProblems(place, spec, target));
    targets.push(target);
  }
  graph.set(file, targets);
}

// Depth-first search; a back edge is a cycle, reported once per module that closes it.
const state = new Map<string, "open" | "done">();
const trail: string[] = [];
function visit(file: string): void {
  state.set(file, "open");
  trail.push(file);
  for (const next of graph.get(file) ?? []) {
    if (!graph.has(next)) continue;
    if (state.get(next) === "open") problems.push(`import cycle: ${[...trail.slice(trail.indexOf(next)), next].map(name).join(" -> ")}`);
    else if (!state.has(next)) visit(next);
  }
  trail.pop();
  state.set(file, "done");
}
for (const file of files) if (!state.has(file)) visit(file);

if (problems.length > 0) {
  for (const problem of problems) console.error(problem);
  process.exit(1);
}
console.log(`imports: ${files.length} modules of src/, no cycle, layers respected`);
