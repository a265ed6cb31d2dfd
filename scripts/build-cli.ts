// Bundles the command line (src/cli with the typed client, hono's client and yaml) into dist/shepherd.mjs, one file
// Node runs. `npm install` builds it (postinstall); bin/shepherd.mjs builds it again when it is missing or older
// than its sources, so `npx shepherd` in a working tree always runs the code that is there.
import { mkdirSync, readdirSync, renameSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url).href);
export const CLI_BUNDLE = join(root, "dist", "shepherd.mjs");
const ENTRY = join(root, "src", "cli", "entry.ts");
/** What ends up in the bundle from this project: the CLI and the client it is built on. */
const SOURCE_DIRS = [join(root, "src", "cli"), join(root, "src", "client")];

/** The latest change under `dir`; a folder's own time counts, so a deleted source makes the bundle stale too. */
function newestMtimeMs(dir: string): number {
  return readdirSync(dir, { withFileTypes: true }).reduce((newest, entry) => {
    const path = join(dir, entry.name);
    return Math.max(newest, entry.isDirectory() ? newestMtimeMs(path) : statSync(path).mtimeMs);
  }, statSync(dir).mtimeMs);
}

/** True when dist/shepherd.mjs is missing or a source of it changed after it was built. */
export function cliBundleIsStale(): boolean {
  let built: number;
  try {
    built = statSync(CLI_BUNDLE).mtimeMs;
  } catch {
    return true;
  }
  return SOURCE_DIRS.some((dir) => newestMtimeMs(dir) > built);
}

/**
 * Builds the bundle into a temporary file and renames it into place: two CLIs started at once on a stale bundle
 * both build, and neither ever imports a half-written file. esbuild is a devDependency, imported only here.
 */
export async function buildCli(): Promise<void> {
  const { build } = await import("esbuild");
  mkdirSync(join(root, "dist"), { recursive: true });
  const temporary = `${CLI_BUNDLE}.${process.pid}.tmp`;
  await build({
    entryPoints: [ENTRY],
    outfile: temporary,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    logLevel: "warning",
    // yaml's Node build is CommonJS and requires Node's modules; an ES module has no `require` of its own.
    banner: { js: ["// Built by scripts/build-cli.ts from src/cli; do not edit.", 'import { createRequire } from "node:module";', "const require = createRequire(import.meta.url);"].join("\n") },
  });
  renameSync(temporary, CLI_BUNDLE);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) await buildCli();
