// Shepherd under test for the soak: a frozen copy of the project in a temp dir, its D1 migrations and
// `wrangler dev` with the soak's vars, FAULTS included (scripts/lib/wrangler-dev.ts, shared with the bench,
// says why a copy). Restarting keeps the same --persist-to, like a redeploy or a crash of the whole process.
// What is the soak's own: which Worker faults the copied build can inject, for the report.
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { applyD1Migrations, snapshotProject, wranglerDev } from "../../scripts/lib/wrangler-dev.ts";

export const API_TOKEN = "chaos-token";
/** The noisy-neighbour phase's tenant (chaos/lib/neighbour.ts) and its token. */
export const NEIGHBOUR_TENANT = "neighbour";
export const NEIGHBOUR_TOKEN = "neighbour-token";

/** The commit copied and how many files differed from it. */
export interface SandboxSource {
  commit: string | null;
  dirtyFiles: number;
}

/** What the copied source knows: the FAULTS var, DEV_HOOKS, and each fault name asked about. */
export interface Features {
  faultsVar: boolean;
  devHooks: boolean;
  faultKeys: Record<string, boolean>;
}

export interface Sandbox {
  repoRoot: string;
  dir: string;
  persistTo: string;
  logFile: string;
  source: SandboxSource;
  features: Features;
  remove: () => void;
}

/** The running `wrangler dev` (scripts/lib/wrangler-dev.ts), as the soak drives it. */
export interface Shepherd {
  /** How long the last start took. */
  readyMs?: number | undefined;
  restart(options: { crash: boolean }): Promise<unknown>;
  stop(): Promise<unknown>;
}

/**
 * Copies the project into a fresh temp dir and describes what was copied: the commit and uncommitted files,
 * and (`faultNames` being the names the soak may ask for) which of them the copied source knows.
 */
export function createSandbox(repoRoot: string, { faultNames = [] }: { faultNames?: readonly string[] } = {}): Sandbox {
  const dir = mkdtempSync(join(tmpdir(), "shepherd-chaos-"));
  const { commit, dirtyFiles }: SandboxSource = snapshotProject(repoRoot, dir);
  return {
    repoRoot,
    dir,
    persistTo: join(dir, "state"),
    logFile: join(dir, "wrangler.log"),
    source: { commit, dirtyFiles },
    features: detectFeatures(join(dir, "src"), faultNames),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/**
 * Whether the copied source knows the FAULTS var and each fault name. A static look only: it tells the
 * report that a server-side fault was never injected because this build does not have the hook yet.
 */
function detectFeatures(srcDir: string, faultNames: readonly string[]): Features {
  const text = readTree(srcDir);
  return {
    faultsVar: /\bFAULTS\b/.test(text),
    devHooks: /\bDEV_HOOKS\b/.test(text),
    faultKeys: Object.fromEntries(faultNames.map((key) => [key, text.includes(key)])),
  };
}

function readTree(dir: string): string {
  let text = "";
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) text += readTree(path);
    else if (/\.(ts|js|mjs)$/.test(name)) text += readFileSync(path, "utf8");
  }
  return text;
}

/** `wrangler d1 migrations apply` for every bound D1 database (DB, DB_1 ...), into the sandbox's persisted state. */
export function applyMigrations(sandbox: Sandbox): Promise<unknown> {
  return applyD1Migrations({ repo: sandbox.repoRoot, tmp: sandbox.dir, cwd: sandbox.dir, persistTo: sandbox.persistTo, logFile: sandbox.logFile });
}

/** The sweep's grace in the soak: after the run every workflow has ended, so only a stale index row is overdue. */
export const SWEEP_GRACE_MS = 5_000;

/**
 * Starts `wrangler dev` on 127.0.0.1:port and waits for GET /healthz. Returns its handle (see wranglerDev):
 * `restart({ crash: true })` for the mid-run kill, `stop()` at the end, `readyMs`.
 * `serverFaults` becomes the FAULTS var (honoured only with DEV_HOOKS=true).
 */
export function startShepherd(sandbox: Sandbox, { port, inspectorPort, serverFaults }: { port: number; inspectorPort: number; serverFaults: Readonly<Record<string, number>> }): Promise<Shepherd> {
  const dev = wranglerDev({
    repo: sandbox.repoRoot,
    tmp: sandbox.dir,
    cwd: sandbox.dir,
    port,
    inspectorPort,
    persistTo: sandbox.persistTo,
    logFile: sandbox.logFile,
    logLevel: undefined,
    testScheduled: true,
    vars: {
      // The index check runs the cron sweep once, as production runs it every minute; the soak's clock is short.
      SWEEP_GRACE_MS: String(SWEEP_GRACE_MS),
      TASK_TOKEN_SECRET: "chaos-secret",
      ALLOW_PRIVATE_TARGETS: "true",
      API_TOKENS: `chaos:${API_TOKEN},${NEIGHBOUR_TENANT}:${NEIGHBOUR_TOKEN}`,
      DEV_HOOKS: "true",
      FAULTS: JSON.stringify(serverFaults),
      // The noisy neighbour's latency measures fairness under the burst; the soak's own tenant carries the faults.
      FAULT_FREE_TENANTS: NEIGHBOUR_TENANT,
    },
  });
  return dev.start();
}
