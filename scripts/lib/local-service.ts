// Shepherd under `wrangler dev` (a snapshot of the project with fresh state, as the soak and the bench start it)
// and the README's example remote beside it, for the tests that drive the service from outside the Workers
// runtime: the CLI's (ports 8820–8829) and the browser's (8840–8849).
/* global fetch */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { ChildProcess } from "node:child_process";
import { waitUntil } from "./async.ts";
import { assertPortsFree } from "./ports.ts";
import type { PortRange } from "./ports.ts";
import { applyD1Migrations, snapshotProject, wranglerDev } from "./wrangler-dev.ts";

const REPO = fileURLToPath(new URL("../../", import.meta.url).href);
const REMOTE_READY_TIMEOUT_MS = 15_000;

export interface LocalServiceOptions {
  /** Named when a port is taken. */
  tool: string;
  /** Shepherd on base, the remote on base + 1, wrangler's inspector on base + 9, all inside `range`. */
  ports: { base: number; range: PortRange };
  /** With `token`, the one API token. */
  tenant: string;
  token: string;
}

export interface LocalService {
  url: string;
  remoteUrl: string;
  stop(): Promise<void>;
}

/** Starts both; taken ports fail at once, naming the tool. */
export async function startLocalService({ tool, ports, tenant, token }: LocalServiceOptions): Promise<LocalService> {
  const [shepherdPort, remotePort, inspectorPort] = [ports.base, ports.base + 1, ports.base + 9];
  await assertPortsFree([shepherdPort, remotePort, inspectorPort], { tool, range: ports.range });
  const dir = mkdtempSync(join(tmpdir(), "shepherd-service-"));
  const logFile = join(dir, "wrangler.log");
  const persistTo = join(dir, "state");
  snapshotProject(REPO, dir);
  await applyD1Migrations({ repo: REPO, tmp: dir, cwd: dir, persistTo, logFile });
  const shepherd = wranglerDev({
    repo: REPO,
    tmp: dir,
    cwd: dir,
    port: shepherdPort,
    inspectorPort,
    persistTo,
    logFile,
    logLevel: undefined,
    vars: { API_TOKENS: `${tenant}:${token}`, TASK_TOKEN_SECRET: `${tenant}-test-secret`, ALLOW_PRIVATE_TARGETS: "true" },
  });
  await shepherd.start();
  const remoteUrl = `http://127.0.0.1:${remotePort}`;
  const remote = await startExampleRemote(remotePort, shepherd.url);
  return {
    url: shepherd.url,
    remoteUrl,
    async stop() {
      remote.kill("SIGTERM");
      await shepherd.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The example remote on `port`, calling back (for /async) the service under test. */
async function startExampleRemote(port: number, shepherdUrl: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, [join(REPO, "scripts", "example-remote.ts")], {
    env: { ...process.env, PORT: String(port), SHEPHERD_URL: shepherdUrl },
    stdio: "ignore",
  });
  await waitUntil(
    async () => {
      if (child.exitCode !== null) throw new Error(`the example remote exited with ${child.exitCode}`);
      return fetch(`http://127.0.0.1:${port}/effects`).then((response) => response.ok, () => false);
    },
    { timeoutMs: REMOTE_READY_TIMEOUT_MS, what: "the example remote to listen" },
  );
  return child;
}
