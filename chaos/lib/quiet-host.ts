// The noisy neighbour's remote, in a process of its own. The harness's process also serves the main remote, the
// burst's 32 clients and the samplers; in its own process the neighbour's remote never answers behind that work, so
// the neighbour's start → end is the engine's alone.
import { fileURLToPath } from "node:url";
import { sleep } from "../../scripts/lib/async.ts";
import { requestJson } from "../../scripts/lib/http-json.ts";
import { spawnGroup, stopGroup } from "../../scripts/lib/process-groups.ts";

const REMOTE_SCRIPT = fileURLToPath(new URL("../remote.ts", import.meta.url));
const READY_TIMEOUT_MS = 15_000;
const PROBE_EVERY_MS = 100;

export interface QuietHost {
  url: string;
  close(): Promise<void>;
}

/** Starts chaos/remote.ts without faults on `port`; resolves once it answers /healthz. */
export async function startQuietHost({ port, seed, logFile }: { port: number; seed: string; logFile?: string }): Promise<QuietHost> {
  const proc = spawnGroup(process.execPath, [REMOTE_SCRIPT, "--port", String(port), "--seed", seed, "--no-faults"], { logFile, title: "the noisy neighbour's remote" });
  const url = `http://127.0.0.1:${port}`;
  const startedAt = Date.now();
  let exited: number | null = null;
  void proc.exited.then((code) => (exited = code));
  while (Date.now() - startedAt < READY_TIMEOUT_MS) {
    if (exited !== null) throw new Error(`the noisy neighbour's remote exited with ${exited} before it answered`);
    const status = await requestJson(`${url}/healthz`, { timeoutMs: 1_000 }).then((r) => r.status, () => 0);
    if (status === 200) return { url, close: () => stopGroup(proc) };
    await sleep(PROBE_EVERY_MS);
  }
  await stopGroup(proc);
  throw new Error(`the noisy neighbour's remote did not answer within ${READY_TIMEOUT_MS / 1000} s`);
}
