// What every engine adapter does the same way around its `wrangler dev` (scripts/lib/wrangler-dev.ts):
// prepare its directory and start, restart after it stopped answering, stop, and name its workerd processes
// for the CPU and memory figures.
import { workerdPids } from "../proc-readings.ts";

/** start/restart/stop/workerdPids/logFile of an engine run by `dev`, after `prepare()` built its directory. */
export function devLifecycle(dev, prepare) {
  return {
    async start() {
      await prepare();
      await dev.start();
    },
    /** wrangler dev again on the same directory and state, for an engine that stopped answering mid-run. */
    restart: () => dev.restart(),
    stop: () => dev.stop(),
    workerdPids: () => workerdPids(dev.pid),
    logFile: dev.logFile,
  };
}
