// The run's one report, as chaos/results/latest.json keeps it and report.ts prints it: the config and the build,
// the restart, how every family ended, the checks, the measurements, and the timelines of what a failed check
// names.
import type { ChaosOptions } from "./args.ts";
import type { Check } from "./checks/check.ts";
import type { DispatchSamples } from "./dispatch.ts";
import { idsNamedBy, timelines } from "./evidence.ts";
import type { Timeline } from "./evidence.ts";
import { PROGRESS_THRESHOLD } from "./judge.ts";
import type { Judgement } from "./judge.ts";
import { measure } from "./metrics.ts";
import type { Measurements } from "./metrics.ts";
import { childReport } from "./children-report.ts";
import type { ParentFigures } from "./children-report.ts";
import { mapReport } from "./map-report.ts";
import type { MapFigures } from "./map-report.ts";
import type { NeighbourReport } from "./neighbour.ts";
import { bulkReport } from "./bulk-report.ts";
import type { BulkFigures } from "./bulk-report.ts";
import { arrivalsReport } from "./arrivals-report.ts";
import type { ArrivalsFigures } from "./arrivals-report.ts";
import { poolReport } from "./pool-report.ts";
import type { PoolFigures } from "./pool-report.ts";
import type { KeyRecord, RemoteStats } from "./remote-ledger.ts";
import { burstReport, languageReport, outcomesOf, scheduleReport, sumCounts } from "./report-sections.ts";
import type { BurstReport, LanguageReport, ScheduleReport } from "./report-sections.ts";
import type { RestartRecord } from "./restart.ts";
import type { Sandbox } from "./shepherd.ts";
import type { SoakRun } from "./soak.ts";
import type { SupervisionFacts } from "./supervision-facts.ts";

export interface SoakReport {
  runAt: string;
  verdict: string;
  config: ChaosOptions & { thresholds: { progress: number; alarmOverdueMs: number } };
  source: Sandbox["source"];
  features: Sandbox["features"];
  timing: { soakMs: number; readMs: number; checksMs: number; totalMs: number; shepherdReadyMs: number | undefined };
  restart: RestartRecord | null;
  outcomes: Record<string, number>;
  declinedByDesign: number;
  burst: BurstReport | null;
  neighbour: NeighbourReport | null;
  schedule: ScheduleReport;
  dispatch: DispatchSamples;
  /** What the language workflows were (sleep, event timing) and every event sent with its answer. */
  language: LanguageReport;
  /** Stalls, lost answers and the host that went down: what each workflow of theirs showed. */
  supervision: Pick<SupervisionFacts, "stalls" | "lostAnswers" | "strayStalls" | "breaker">;
  /** The map phase: each map workflow's figures. */
  maps: MapFigures[];
  /** The parent/child phase: each parent's figures. */
  parents: ParentFigures[];
  /** The pool phase: its workflows, workers, polls, the worker killed and what the restart found (null: none ran). */
  pool: PoolFigures | null;
  /** The bulk phase: how its workflows ended, the job's course and pace, the front door meanwhile (null: none ran). */
  bulk: BulkFigures | null;
  /** The arrivals phase: each door's outcomes, the delayed starts against the restart, batches, messages, notices, long polls (null: none ran). */
  arrivals: ArrivalsFigures | null;
  /** The regular workload meets the same front door; its back-pressure answers are counted apart. */
  regularBackPressure: Record<string, number>;
  checks: Check[];
  measurements: Measurements;
  /** The workflows the failed checks name and the latest detections, each as one merged engine + remote timeline. */
  evidence: Timeline[];
  remote: { totals: RemoteStats["totals"]; secondHostTotals: RemoteStats["totals"]; unkeyedRequests: number; notableKeys: KeyRecord[] };
}

/** What the report is made of, beyond the soak and its judgement. */
export interface ReportSources {
  options: ChaosOptions;
  sandbox: Sandbox;
  runStart: number;
  shepherdReadyMs: number | undefined;
}

export function buildReport(soak: SoakRun, judged: Judgement, { options, sandbox, runStart, shepherdReadyMs }: ReportSources): SoakReport {
  const { finals, supervisionSeen: seen } = judged;
  const outage = soak.restarts.outage();
  const measurements = measure(finals, outage);
  const checksMs = Date.now() - judged.readStart - judged.readMs;
  return {
    runAt: new Date(runStart).toISOString(),
    verdict: judged.verdict,
    config: { ...options, thresholds: { progress: PROGRESS_THRESHOLD, alarmOverdueMs: 5_000 } },
    source: sandbox.source,
    features: sandbox.features,
    timing: { soakMs: soak.soakMs, readMs: judged.readMs, checksMs, totalMs: Date.now() - runStart, shepherdReadyMs },
    restart: soak.restarts.record(),
    outcomes: outcomesOf(finals),
    declinedByDesign: soak.allWorkflows.filter((wf) => wf.declinedStep).length,
    burst: soak.burstRun.summary && burstReport(soak.burstRun.summary, finals.filter((f) => f.kind === "burst"), soak.burstWorkflows, outage),
    neighbour: judged.neighbourSeen,
    schedule: scheduleReport(soak.scheduleRun, finals, outage),
    dispatch: soak.dispatch,
    language: languageReport(soak.workflows, finals, outage),
    supervision: { stalls: seen.stalls, lostAnswers: seen.lostAnswers, strayStalls: seen.strayStalls.slice(0, 20), breaker: seen.breaker },
    maps: mapReport(soak.mapWorkflows, soak.mapRun.records, finals, judged.remoteStats, outage),
    parents: childReport(soak.parentFamily, soak.childRun, finals, outage),
    pool: poolReport(soak.poolWorkflows, soak.poolRun, finals, outage, runStart),
    bulk: bulkReport(soak.bulkWorkflows, soak.bulkRun, finals, outage, runStart),
    arrivals: arrivalsReport(soak.arrivals, soak.arrivalsRun, finals, outage, runStart),
    regularBackPressure: sumCounts(soak.regular.map((r) => r.backPressure ?? {})),
    checks: judged.checks,
    measurements,
    evidence: timelines(evidenceIds(judged, measurements), finals, judged.remoteStats, outage),
    remote: remoteFigures(judged),
  };
}

/** The failed checks' workflows, and detections later than the supervisor's 1 s promise that the restart does not explain. */
function evidenceIds({ checks, finals }: Judgement, measurements: Measurements): string[] {
  const lateDetections = measurements.slowestDetections.filter((d) => !d.inOutage && d.overdueMs > 1_000).map((d) => d.id);
  return [...new Set([...idsNamedBy(checks, (id) => finals.some((f) => f.id === id && f.view)), ...lateDetections.slice(0, 3)])];
}

function remoteFigures({ mainRemoteStats, secondHostStats, remoteStats }: Judgement): SoakReport["remote"] {
  return {
    totals: mainRemoteStats.totals,
    secondHostTotals: secondHostStats.totals,
    unkeyedRequests: remoteStats.unkeyedRequests,
    // Only the keys worth a look: replayed, faulted more than once, applied twice or malformed.
    notableKeys: Object.values(remoteStats.keys)
      .filter((k) => k.replays > 0 || k.applied > 1 || !k.wellFormed)
      .slice(0, 200),
  };
}
