// What every engine adapter does the same way around its `wrangler dev` (scripts/lib/wrangler-dev.ts):
// prepare its directory and start, restart after it stopped answering, stop, and name its workerd processes
// for the CPU and memory figures.
import type { WranglerDev } from "../../../scripts/lib/wrangler-dev.ts";
import { workerdPids } from "../proc-readings.ts";
import type { Lifecycle } from "./engine.ts";

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
