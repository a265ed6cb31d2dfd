// What the CLI's tests run against: Shepherd under `wrangler dev` (a snapshot of the project with fresh state, as
// the soak and the bench start it) and the README's example remote, on the CLI tests' ports (8820–8829).
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { waitUntil } from "../../../scripts/lib/async.mjs";
import { assertPortsFree } from "../../../scripts/lib/ports.mjs";
import { applyD1Migrations, snapshotProject, wranglerDev } from "../../../scripts/lib/wrangler-dev.mjs";

export const REPO = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");
const SHEPHERD_PORT = 8820;
const REMOTE_PORT = 8821;
const INSPECTOR_PORT = 8829;
/** Nothing listens here: the "cannot reach the service" case. */
export const UNREACHABLE_URL = "http://127.0.0.1:8828";
export const TENANT_TOKEN = "cli-token";

export interface Service {
  url: string;
  remoteUrl: string;
  stop(): Promise<void>;
}

export async function startService(): Promise<Service> {
  // Another run of these tests (or anything else) on our ports fails here, naming the port.
  await assertPortsFree([SHEPHERD_PORT, REMOTE_PORT, INSPECTOR_PORT], { tool: "the CLI tests", range: [8820, 8829] });
  const dir = mkdtempSync(join(tmpdir(), "shepherd-cli-"));
  const logFile = join(dir, "wrangler.log");
  const persistTo = join(dir, "state");
  snapshotProject(REPO, dir);
  await applyD1Migrations({ repo: REPO, tmp: dir, cwd: dir, persistTo, logFile });
  const shepherd = wranglerDev({
    repo: REPO,
    tmp: dir,
    cwd: dir,
    port: SHEPHERD_PORT,
    inspectorPort: INSPECTOR_PORT,
    persistTo,
    logFile,
    logLevel: undefined,
    vars: { API_TOKENS: `cli:${TENANT_TOKEN}`, TASK_TOKEN_SECRET: "cli-test-secret", ALLOW_PRIVATE_TARGETS: "true" },
  });
  await shepherd.start();
  const remote = await startExampleRemote(shepherd.url);
  return {
    url: shepherd.url,
    remoteUrl: `http://127.0.0.1:${REMOTE_PORT}`,
    async stop() {
      remote.kill("SIGTERM");
      await shepherd.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The example remote, calling back (for /async) the service under test. */
async function startExampleRemote(shepherdUrl: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, [join(REPO, "scripts", "example-remote.mjs")], {
    env: { ...process.env, PORT: String(REMOTE_PORT), SHEPHERD_URL: shepherdUrl },
    stdio: "ignore",
  });
  await waitUntil(
    async () => {
      if (child.exitCode !== null) throw new Error(`the example remote exited with ${child.exitCode}`);
      return fetch(`http://127.0.0.1:${REMOTE_PORT}/effects`).then((response) => response.ok, () => false);
    },
    { timeoutMs: 15_000, what: "the example remote to listen" },
  );
  return child;
}
