// The tools' ports: each owns a fixed range on 127.0.0.1 (bench 8800–8809, chaos 8810–8819) so they can run
// beside each other and beside `npm start` (8787) and the quickstart remote (8788); a run fails at once,
// naming the port, rather than half-starting against another session's server.
import { createServer } from "node:net";

/** A tool's ports: [lowest, highest]. */
export type PortRange = readonly [number, number];

/** Throws unless `count` ports from `base` stay within [low, high]. */
export function checkPortBase(base: number, count: number, [low, high]: PortRange): void {
  if (base < low || base + count - 1 > high) throw new Error(`--port-base must keep all ${count} ports within ${low}–${high} (got ${base})`);
}

/** Fails early, with the port named, when something already listens on one of ours. */
export async function assertPortsFree(ports: readonly number[], { tool, range: [low, high] }: { tool: string; range: PortRange }): Promise<void> {
  for (const port of ports) {
    await new Promise<void>((resolve, reject) => {
      const probe = createServer();
      probe.once("error", () => reject(new Error(`port ${port} on 127.0.0.1 is in use (${tool} uses ${low}–${high}; see --port-base)`)));
      probe.listen(port, "127.0.0.1", () => probe.close(() => resolve()));
    });
  }
}
