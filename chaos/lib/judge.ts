// After the soak: the final word of every workflow, then the checks Temporal's omes and Restate's Jepsen suite
// make, row 26's, the schedule's and the supervisor's, the phases' (map, parent/child, pool, bulk, arrivals), and the
// verdict they add up to.
import { checkAlarms } from "./checks/alarms.ts";
import { checkArrivals } from "./checks/arrivals.ts";
import { checkBulk } from "./checks/bulk.ts";
import { checkChildren } from "./checks/children.ts";
import type { Check } from "./checks/check.ts";
import { checkIndex } from "./checks/d1-index.ts";
import { checkEffects } from "./checks/effects.ts";
import { checkEvents } from "./checks/events.ts";
import { checkMaps } from "./checks/map.ts";
import { checkPool } from "./checks/pool.ts";
import { checkProgress, checkServerFaults, checkTerminal } from "./checks/outcomes.ts";
import { checkScheduleFires } from "./checks/schedule-fires.ts";
import { checkScheduleToStart } from "./checks/schedule-to-start.ts";
import { checkNoQueueAttempts, checkSleeps } from "./checks/sleeps.ts";
import { checkBreaker, checkLostAnswers, checkStalls } from "./checks/supervision.ts";
import { mergeRemoteStats } from "./breaker.ts";
import { readFinals } from "./finals.ts";
import type { Final } from "./finals.ts";
import type { Hosts } from "./hosts.ts";
import { checkNeighbour, neighbourReport } from "./neighbour.ts";
import type { NeighbourReport } from "./neighbour.ts";
import type { RemoteStats } from "./remote-ledger.ts";
import type { Features } from "./shepherd.ts";
import type { SoakRun } from "./soak.ts";
import { supervisionFacts } from "./supervision-facts.ts";
import type { SupervisionFacts } from "./supervision-facts.ts";

export const PROGRESS_THRESHOLD = 0.95;

export interface Judgement {
  finals: Final[];
  /** When the final reading began, and how long it took: the checks' time is what came after. */
  readStart: number;
  readMs: number;
  /** The main remote's stats (the report's figures) and both hosts' merged (the checks'). */
  mainRemoteStats: RemoteStats;
  secondHostStats: RemoteStats;
  remoteStats: RemoteStats;
  neighbourSeen: NeighbourReport | null;
  supervisionSeen: SupervisionFacts;
  checks: Check[];
  verdict: string;
  exitCode: number;
}

/** Reads every workflow, runs every check, and says what they add up to (`allowSkips`: a skipped check passes). */
export async function judgeSoak(soak: SoakRun, hosts: Hosts, { features, serverFaults, allowSkips }: { features: Features; serverFaults: Readonly<Record<string, number>>; allowSkips: boolean }): Promise<Judgement> {
  const readStart = Date.now();
  const finals = await readFinals(soak.client, soak.results);
  const readMs = Date.now() - readStart;
  // The effects, key checks and timelines cover both hosts; the report's remote figures are the main one's.
  const mainRemoteStats = hosts.remote.stats();
  const secondHostStats = hosts.secondHost.stats();
  const remoteStats = mergeRemoteStats(mainRemoteStats, secondHostStats);
  const outage = soak.restarts.outage();
  const neighbourSeen = soak.neighbourRecords && neighbourReport(soak.neighbourRecords, outage);
  const supervisionSeen = supervisionFacts({ plan: soak.supervisionPlan, run: soak.supervisionRun, finals, remoteStats, secondHostStats });
  const { client, allWorkflows } = soak;
  const checks = [
    checkTerminal(soak.results, finals),
    checkEffects(remoteStats, finals, allWorkflows),
    await checkIndex(client, finals),
    await checkAlarms(client, finals, soak.alarms),
    checkProgress(finals, allWorkflows, PROGRESS_THRESHOLD),
    checkScheduleToStart(finals, allWorkflows),
    checkEvents(finals, allWorkflows),
    checkSleeps(finals, allWorkflows, outage),
    checkNoQueueAttempts(finals, allWorkflows, remoteStats),
    checkScheduleFires(soak.scheduleRun, finals, outage),
    checkStalls(supervisionSeen, outage),
    checkLostAnswers(supervisionSeen),
    checkBreaker(supervisionSeen.breaker),
    ...checkMaps(soak.mapWorkflows, soak.mapRun.records, finals, remoteStats),
    ...(await checkChildren(client, soak.parentFamily, soak.childRun, finals)),
    ...checkPool(soak.poolWorkflows, soak.poolRun, finals, remoteStats, { outage, runtime: { alarmsOverdueMs: soak.alarms?.maxOverdueMs ?? 0, roundTrips: soak.alarms?.roundTrips ?? [] } }),
    ...checkBulk(soak.bulkWorkflows, soak.bulkRun, finals, { outage, restartAsked: soak.restartAsked }),
    ...checkArrivals(soak.arrivals, soak.arrivalsRun, finals, outage),
    checkServerFaults(features, serverFaults),
    ...(neighbourSeen ? checkNeighbour(neighbourSeen) : []),
  ];
  return { finals, readStart, readMs, mainRemoteStats, secondHostStats, remoteStats, neighbourSeen, supervisionSeen, checks, ...verdictOf(checks, allowSkips) };
}

/** FAIL naming the failed checks; a skipped check fails too unless skips are allowed. Exit 1 unless it passed. */
function verdictOf(checks: readonly Check[], allowSkips: boolean): { verdict: string; exitCode: number } {
  const failed = checks.filter((c) => c.status === "fail");
  const skippedChecks = checks.filter((c) => c.status === "skipped");
  const verdict = failed.length
    ? `FAIL (${failed.map((c) => c.name).join("; ")})`
    : skippedChecks.length
      ? `${allowSkips ? "PASS with skips" : "FAIL: skipped"} (${skippedChecks.map((c) => c.name).join("; ")})`
      : "PASS";
  return { verdict, exitCode: failed.length || (skippedChecks.length && !allowSkips) ? 1 : 0 };
}
