// Local development server: applies D1 migrations to the local databases (every one wrangler.toml binds), then runs
// `wrangler dev` on http://localhost:8787 with persisted local state, and fires its cron trigger (the sweep) every
// minute, since wrangler dev runs none.
// The dev API token is `dev-token` (tenant `dev`). Extra arguments are passed to `wrangler dev`, e.g.
//   npm start -- --port 9000 --var API_TOKENS:acme:secret
import { spawn } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { devServerUrl, fireCronEveryMinute } from "./lib/cron-trigger.ts";
import { d1Bindings } from "./lib/d1-bindings.ts";

const root = fileURLToPath(new URL("..", import.meta.url));
const wranglerBin = fileURLToPath(new URL("../node_modules/wrangler/bin/wrangler.js", import.meta.url));
const extraArgs = process.argv.slice(2);
// No telemetry, and no download of the `Request.cf` placeholder data (override via the environment).
const env = { WRANGLER_SEND_METRICS: "false", CLOUDFLARE_CF_FETCH_ENABLED: "false", ...process.env };

function hasFlag(name: string): boolean {
  return extraArgs.some((arg) => arg === name || arg.startsWith(`${name}=`));
}

/** Runs wrangler with `args` to its end, forwarding Ctrl-C and SIGTERM; resolves with its exit code. */
function run(args: readonly string[]): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [wranglerBin, ...args], { cwd: root, env, stdio: "inherit" });
    const forward = (signal: NodeJS.Signals): void => {
      child.kill(signal);
    };
    process.on("SIGINT", forward);
    process.on("SIGTERM", forward);
    child.on("error", reject);
    child.on("exit", (code, signal) => {
      process.off("SIGINT", forward);
      process.off("SIGTERM", forward);
      resolve(code ?? (signal ? 1 : 0));
    });
  });
}

function flagValue(name: string): string | undefined {
  const index = extraArgs.findIndex((arg) => arg === name || arg.startsWith(`${name}=`));
  const arg = extraArgs[index];
  if (arg === undefined) return undefined;
  return arg.includes("=") ? arg.slice(arg.indexOf("=") + 1) : extraArgs[index + 1];
}

// The migrations go wherever wrangler dev will keep its state, the caller's --persist-to included.
const persistTo = flagValue("--persist-to") ?? ".wrangler/state";
const persistArgs = hasFlag("--persist-to") ? [] : ["--persist-to", persistTo];

// Every bound index database (DB, DB_1 ...), so raising INDEX_SHARDS never meets one without tables.
for (const binding of d1Bindings(join(root, "wrangler.toml"))) {
  const migrateCode = await run(["d1", "migrations", "apply", binding, "--local", "--persist-to", persistTo]);
  if (migrateCode !== 0) {
    process.exit(migrateCode);
  }
}

const devArgs = [
  "dev",
  ...persistArgs,
  ...(hasFlag("--port") ? [] : ["--port", "8787"]),
  // Local development only: never put these in wrangler.toml.
  "--var",
  "TASK_TOKEN_SECRET:dev-only-task-token-secret",
  "--var",
  "ALLOW_PRIVATE_TARGETS:true",
  "--var",
  "API_TOKENS:dev:dev-token",
  // Dev-only routes (/dev/workflows/{id}) and the FAULTS switch; see src/dev/faults.ts.
  "--var",
  "DEV_HOOKS:true",
  // GET /__scheduled runs the scheduled handler: the cron trigger below calls it.
  "--test-scheduled",
  ...extraArgs,
];
const server = devServerUrl({ ip: flagValue("--ip"), port: flagValue("--port"), protocol: flagValue("--local-protocol") });
const cron = fireCronEveryMinute({ url: server });
const exitCode = await run(devArgs);
cron.stop();
process.exit(exitCode);
