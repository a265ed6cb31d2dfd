// What every engine adapter does the same way around its `wrangler dev` (scripts/lib/wrangler-dev.ts):
// prepare its directory and start, restart after it stopped answering, stop, and name its workerd processes
// for the CPU and memory figures.
import { cpSync } from "node:fs";
import { join } from "node:path";
import { wranglerDev } from "../../../scripts/lib/wrangler-dev.ts";
import type { WranglerDev } from "../../../scripts/lib/wrangler-dev.ts";
import { workerdPids } from "../proc-readings.ts";
import type { Lifecycle } from "./engine.ts";
import type { EngineOptions } from "./shepherd.ts";

/** start/restart/stop/workerdPids/logFile of an engine run by `dev`, after `prepare()` built its directory. */
export function devLifecycle(dev: WranglerDev, prepare: () => Promise<void> | void): Lifecycle {
  return {
    async start() {
      await prepare();
      await dev.start();
    },
    restart: () => dev.restart(),
    stop: () => dev.stop(),
    workerdPids: () => workerdPids(dev.pid),
    logFile: dev.logFile,
  };
}

/**
 * An engine that is one of the bench's own Workers (bench/<source>: the Workflows baseline, the floor), run from a
 * copy in the temp dir with its own persisted state: its `wrangler dev`, and the lifecycle that copies it first.
 */
export function copiedBenchApp({ repo, tmp, port, inspectorPort, verbose }: EngineOptions, { name, source }: { name: string; source: string }): { dev: WranglerDev; lifecycle: Lifecycle } {
  const dir = join(tmp, `${name}-app`);
  const dev = wranglerDev({
    repo, tmp, cwd: dir, port, inspectorPort,
    persistTo: join(tmp, `${name}-state`),
    logFile: join(tmp, `${name}-dev.log`),
    logLevel: verbose ? "info" : "warn",
  });
  // Its tsconfig.json (for `npm run typecheck`) extends the project's, which the copy does not have beside it.
  const copied = (path: string): boolean => !path.includes(".wrangler") && !path.endsWith("tsconfig.json");
  return { dev, lifecycle: devLifecycle(dev, () => cpSync(join(repo, "bench", source), dir, { recursive: true, filter: copied })) };
}
