// Starts what the browser tests look at: Shepherd under `wrangler dev` (a snapshot of the project with fresh
// state, as the soak and the bench run it) and the example remote, on the browser tests' ports (8840–8849).
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { TestProject } from "vitest/node";
import { applyD1Migrations, snapshotProject, wranglerDev } from "../../../scripts/lib/wrangler-dev.mjs";
import { waitUntil } from "../../../scripts/lib/async.mjs";

const REPO = fileURLToPath(new URL("../../../", import.meta.url));
const SHEPHERD_PORT = 8840;
const INSPECTOR_PORT = 8849;
const REMOTE_PORT = 8841;
export const BROWSER_TOKEN = "browser-token";

declare module "vitest" {
  export interface ProvidedContext {
    baseUrl: string;
    remoteUrl: string;
  }
}

export default async function setup(project: TestProject) {
  const dir = mkdtempSync(join(tmpdir(), "shepherd-browser-"));
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
    vars: { API_TOKENS: `browser:${BROWSER_TOKEN}`, TASK_TOKEN_SECRET: "browser-secret", ALLOW_PRIVATE_TARGETS: "true" },
  });
  await shepherd.start();
  const remote = await startExampleRemote(shepherd.url);
  project.provide("baseUrl", shepherd.url);
  project.provide("remoteUrl", `http://127.0.0.1:${REMOTE_PORT}`);
  return async () => {
    remote.kill("SIGTERM");
    await shepherd.stop();
    rmSync(dir, { recursive: true, force: true });
  };
}

/** The README's example remote, calling back (for /async) the service under test. */
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
