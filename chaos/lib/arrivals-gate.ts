// The arrivals phase's gate: its held sends wait until the restarter is about to kill Shepherd (or, without a restart
// or once the regular workload is over, until the phase is wound down), and what must follow the restart waits until
// Shepherd is back (or no restart will come).
import { sleep } from "../../scripts/lib/async.ts";

/** How often what follows the restart looks whether it is over. */
const RESTART_LOOK_MS = 500;

/** Holds the kill's sends until released, and what follows the restart until it is over (or will not come). */
export interface HeldGate {
  released: Promise<void>;
  release: (atKill: boolean) => void;
  after: () => Promise<void>;
  releasedAt: () => number | null;
  atKill: () => boolean;
}

export function heldGate(restartOver: () => boolean, deadline: number): HeldGate {
  let open: () => void = () => {};
  const released = new Promise<void>((resolve) => (open = resolve));
  let releasedAt: number | null = null;
  let atKill = false;
  let woundDown = false;
  return {
    released,
    release(kill) {
      if (!kill) woundDown = true;
      if (releasedAt !== null) return;
      releasedAt = Date.now();
      atKill = kill;
      open();
    },
    async after() {
      while (!restartOver() && !woundDown && Date.now() < deadline) await sleep(RESTART_LOOK_MS);
    },
    releasedAt: () => releasedAt,
    atKill: () => atKill,
  };
}
