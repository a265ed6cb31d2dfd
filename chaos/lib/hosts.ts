// The soak's ports and the three remotes it starts before Shepherd: the main remote with its faults, the breaker
// scenario's second host, and the noisy neighbour's quiet host.
import { startRemote } from "../remote.ts";
import type { Remote } from "../remote.ts";
import type { ChaosOptions } from "./args.ts";
import { arrivalsSecret, isArrivalKey } from "./arrivals.ts";
import { familyDecline } from "./children.ts";
import { NO_REMOTE_FAULTS } from "./faults.ts";
import { startQuietHost } from "./quiet-host.ts";
import type { QuietHost } from "./quiet-host.ts";
import { SCHEDULE_ID } from "./schedule.ts";

/** Shepherd, its inspector, the remote, the breaker scenario's second host, the noisy neighbour's host. */
export interface Ports {
  shepherd: number;
  inspector: number;
  remote: number;
  secondHost: number;
  quietHost: number;
}

export interface Hosts {
  remote: Remote;
  secondHost: Remote;
  quietHost: QuietHost;
  close(): Promise<void>;
}

export const portsOf = (base: number): Ports => ({ shepherd: base, inspector: base + 1, remote: base + 2, secondHost: base + 3, quietHost: base + 4 });

export async function startHosts(ports: Ports, options: ChaosOptions, shepherdUrl: string): Promise<Hosts> {
  // The schedule's workflow ids carry the fire time, so its declines could not be predicted: it has none, nor do the
  // arrivals phase's, which must all complete. The parent/child family's come from its shapes (lib/children.ts).
  const declineOf = (key: string): boolean | null => (key.startsWith(`${SCHEDULE_ID}:`) || isArrivalKey(options.seed, key) ? false : familyDecline(options.seed, key));
  const noticeSecret = arrivalsSecret(options.seed);
  const remote = await startRemote({ port: ports.remote, seed: options.seed, faults: options.remoteFaults, declineOf, shepherdUrl, noticeSecret });
  // The breaker scenario's host: the same remote without faults, down for 20 s when lib/breaker.ts says.
  const secondHost = await startRemote({ port: ports.secondHost, seed: options.seed, faults: NO_REMOTE_FAULTS, shepherdUrl });
  // The noisy neighbour's host: no faults, no other traffic, and a process of its own, so its latency is the engine's alone.
  const quietHost = await startQuietHost({ port: ports.quietHost, seed: options.seed });
  return {
    remote,
    secondHost,
    quietHost,
    async close() {
      await remote.close();
      await secondHost.close();
      await quietHost.close();
    },
  };
}
