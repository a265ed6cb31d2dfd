// Shepherd's crash in the middle of the soak: kill -9 of the wrangler process group and a start on the same
// --persist-to, as a crash of the whole machine and its restart would. What the rest of the run needs of it:
// whether it is under way (samplers and followers pause), and once over, when it came, why, and the outage. A phase
// that wants the kill to find something of its own in flight says so with a hook, run just before the kill; one whose
// timing is counted from the kill itself runs last, once every other hook has settled.
import type { Shepherd } from "./shepherd.ts";

/** Run just before the kill, after the restart was decided: sets up what the kill should find; says what (or null). */
export type BeforeKill = () => Promise<string | null>;

/** From the kill to Shepherd healthy again (epoch ms). */
export interface Outage {
  from: number;
  to: number;
}

export interface RestartRecord {
  /** Since the run's start. */
  atMs: number;
  downMs: number;
  reason: string;
  outage: Outage;
}

export interface Restarter {
  restart(reason: string): Promise<void>;
  restarting(): boolean;
  /** Adds a hook run just before the kill (the pool phase's wave); its word joins the restart's reason. */
  beforeKill(hook: BeforeKill): void;
  /** Adds a hook run once the others have settled, the last thing before the kill (the arrivals' starts due in the outage). */
  lastBeforeKill(hook: BeforeKill): void;
  /** The restart once it is over; null before (or without one). */
  record(): RestartRecord | null;
  /** Its outage, for the checks that excuse what it explains. */
  outage(): Outage | null;
}

export function restarter(shepherd: Shepherd, runStart: number, log: (message: string) => void): Restarter {
  let record: RestartRecord | null = null;
  let restarting = false;
  const hooks: BeforeKill[] = [];
  const lastHooks: BeforeKill[] = [];
  const run = async (list: readonly BeforeKill[]): Promise<string[]> => (await Promise.all(list.map((hook) => hook()))).filter((note) => note !== null);
  return {
    async restart(asked) {
      restarting = true;
      const notes = await run(hooks);
      const reason = [asked, ...notes, ...(await run(lastHooks))].join("; ");
      const from = Date.now();
      log(`restarting shepherd (kill -9 of the wrangler process group, same --persist-to): ${reason}`);
      await shepherd.restart({ crash: true });
      const to = Date.now();
      record = { atMs: from - runStart, downMs: to - from, reason, outage: { from, to } };
      restarting = false;
      log(`shepherd healthy again after ${to - from} ms`);
    },
    restarting: () => restarting,
    beforeKill(hook) {
      hooks.push(hook);
    },
    lastBeforeKill(hook) {
      lastHooks.push(hook);
    },
    record: () => record,
    outage: () => record?.outage ?? null,
  };
}
