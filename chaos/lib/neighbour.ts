// The noisy-neighbour phase (reliability case 33): a second tenant starts one small workflow a second while the
// burst floods the task queue, and keeps going for a while after the burst has ended, for the same figures with
// no burst beside. What it must show: none of its starts is refused because of the other tenant's backlog, and
// its workflows end within a few seconds (p99 start → end under 5 s during the burst). Its work runs against a
// remote with no faults and with no Worker faults injected (FAULT_FREE_TENANTS), so its latency measures
// fairness, not recovery; a workflow that spans the restart is counted apart.
import { mapPool, sleep } from "../../scripts/lib/async.ts";
import type { StepView, WorkflowView } from "./api-shapes.ts";
import { createClient, isTerminal } from "./client.ts";
import type { ShepherdClient } from "./client.ts";
import { fail, pass } from "./checks/check.ts";
import type { Check } from "./checks/check.ts";
import { remotePost } from "./definitions.ts";
import type { StartPayload } from "./definitions.ts";
import { distribution } from "./metrics.ts";
import type { Distribution } from "./metrics.ts";
import type { Outage } from "./restart.ts";
import { NEIGHBOUR_TENANT, NEIGHBOUR_TOKEN } from "./shepherd.ts";
import { BACK_PRESSURE_STATUSES, startUntilAccepted } from "./starts.ts";
import type { StartAccount } from "./starts.ts";

export const NEIGHBOUR_KIND = "neighbour";
const START_EVERY_MS = 1_000;
/** After the burst has ended, the neighbour keeps starting this many workflows: the no-burst figures. */
const STARTS_AFTER_BURST = 20;
/** The bound on start → end during the burst, at the 99th percentile. */
export const NEIGHBOUR_P99_LIMIT_MS = 5_000;
/** A workflow that ran within this long of the restart's outage is counted apart from the latency figures. */
const OUTAGE_GRACE_MS = 5_000;
const FOLLOW_EVERY_MS = 1_000;
/** The neighbour stops starting this long before the soak's deadline, so its last workflows end and are read by then. */
const TAIL_MS = 15_000;

/** One neighbour workflow: its start, the phase it was started in, and its last reading. */
export interface NeighbourRecord extends StartAccount {
  id: string;
  kind: string;
  phase: "burst" | "after";
  started: boolean;
  requestedAt: number;
  view?: WorkflowView;
}

/** One phase's figures. */
export interface PhaseFigures {
  starts: number;
  refused: number;
  notStarted: number;
  notCompleted: { id: string; status: string | null }[];
  spannedRestart: number;
  startToEndMs: Distribution;
  slowest: { id: string; ms: number; createdAt: number; steps: string[] }[];
}

export interface NeighbourReport {
  tenant: string;
  burst: PhaseFigures;
  after: PhaseFigures;
}

export interface NeighbourDrive {
  baseUrl: string;
  remoteUrl: string;
  runId: number;
  burstDone: Promise<unknown>;
  deadline: number;
  paused: () => boolean;
}

/**
 * Two steps against the fault-free remote, with the contract's default timeouts: an ordinary tenant's workflow.
 * (The soak's own 1 s heartbeats would time out attempts that the saturated runtime is merely slow to report.)
 */
function neighbourPayload(id: string, remoteUrl: string): StartPayload {
  const step = (stepId: string) => ({ id: stepId, action: remotePost(`${remoteUrl}/act/${stepId}`, stepId) });
  return { id, input: {}, definition: { name: "chaos-neighbour", steps: [step("n1"), step("n2")] } };
}

/**
 * Starts a neighbour workflow every second from now until `burstDone` has resolved and STARTS_AFTER_BURST more have
 * been started (or TAIL_MS before `deadline`), pausing while `paused()`; then follows them all to their end. Resolves
 * to the phase's results: one record per workflow with its start answers, phase ("burst" or "after") and final view.
 */
export async function driveNeighbour({ baseUrl, remoteUrl, runId, burstDone, deadline, paused }: NeighbourDrive): Promise<NeighbourRecord[]> {
  const client = createClient(baseUrl, { token: NEIGHBOUR_TOKEN });
  let burstOver = false;
  void burstDone.then(() => (burstOver = true));
  const records: NeighbourRecord[] = [];
  const starting: Promise<unknown>[] = [];
  let after = 0;
  while (Date.now() < deadline - TAIL_MS && after < STARTS_AFTER_BURST) {
    if (!paused()) {
      const record: NeighbourRecord = { id: `neighbour-${runId}-${records.length}`, kind: NEIGHBOUR_KIND, phase: burstOver ? "after" : "burst", started: false, startTries: 0, startStatuses: {}, requestedAt: Date.now() };
      if (burstOver) after += 1;
      records.push(record);
      starting.push(startUntilAccepted(client, neighbourPayload(record.id, remoteUrl), record, { deadline }).then((started) => (record.started = started)));
    }
    await sleep(START_EVERY_MS);
  }
  await Promise.all(starting);
  await followToEnd(client, records.filter((r) => r.started), deadline);
  return records;
}

async function followToEnd(client: ShepherdClient, records: NeighbourRecord[], deadline: number): Promise<void> {
  let open = records;
  while (open.length > 0 && Date.now() < deadline) {
    await mapPool(open, 4, async (record: NeighbourRecord) => {
      const res = await client.getWorkflow(record.id);
      if (res.status === 200 && res.value) record.view = res.value;
    });
    open = open.filter((r) => !isTerminal(r.view?.status));
    if (open.length > 0) await sleep(FOLLOW_EVERY_MS);
  }
}

/** The phase's figures: refused starts and start → end latency per phase, the restart's workflows apart. */
export function neighbourReport(records: readonly NeighbourRecord[], outage: Outage | null): NeighbourReport {
  const spansOutage = (r: NeighbourRecord): boolean => outage !== null && r.view !== undefined && r.view.createdAt <= outage.to + OUTAGE_GRACE_MS && (r.view.endedAt ?? Infinity) >= outage.from - OUTAGE_GRACE_MS;
  const phase = (name: NeighbourRecord["phase"]): PhaseFigures => {
    const inPhase = records.filter((r) => r.phase === name);
    const measured = inPhase.flatMap((r) => (r.view?.endedAt !== undefined && !spansOutage(r) ? [{ id: r.id, view: r.view }] : []));
    return {
      starts: inPhase.length,
      refused: inPhase.reduce((n, r) => n + Object.entries(r.startStatuses).filter(([status]) => BACK_PRESSURE_STATUSES.has(Number(status))).reduce((m, [, k]) => m + k, 0), 0),
      notStarted: inPhase.filter((r) => !r.started).length,
      notCompleted: inPhase.filter((r) => r.started && r.view?.status !== "completed").map((r) => ({ id: r.id, status: r.view?.status ?? null })),
      spannedRestart: inPhase.filter(spansOutage).length,
      startToEndMs: distribution(measured.map(durationOf)),
      // Where the slowest ones spent their time: each attempt's wait to be claimed and its run.
      slowest: measured
        .sort((a, b) => durationOf(b) - durationOf(a))
        .slice(0, 5)
        .map((r) => ({ id: r.id, ms: durationOf(r), createdAt: r.view.createdAt, steps: r.view.steps.map(attemptTimes) })),
    };
  };
  return { tenant: NEIGHBOUR_TENANT, burst: phase("burst"), after: phase("after") };
}

const durationOf = ({ view }: { view: WorkflowView }): number => (view.endedAt ?? NaN) - view.createdAt;

/** `n: claimed after Q ms, ran R ms` for each attempt of a step. */
function attemptTimes(step: StepView): string {
  return `${step.id}: ` + step.attempts.map((a) => `#${a.n} ${a.status} queued ${(a.startedAt ?? NaN) - a.scheduledAt} ms, ran ${(a.endedAt ?? NaN) - (a.startedAt ?? NaN)} ms`).join("; ");
}

/** The two checks of the issue: no start of the neighbour refused, and its p99 during the burst under the limit. */
export function checkNeighbour(report: NeighbourReport): Check[] {
  const { burst, after } = report;
  const refused = burst.refused + after.refused;
  const unfinished = [...burst.notCompleted, ...after.notCompleted];
  const refusals = `${refused} of ${burst.starts + after.starts} starts refused (429/503)` + (burst.notStarted + after.notStarted ? `, ${burst.notStarted + after.notStarted} never started` : "");
  const latency = `p99 ${burst.startToEndMs.p99 ?? "–"} ms during the burst (n=${burst.startToEndMs.n}, ${burst.spannedRestart} spanning the restart apart), p99 ${after.startToEndMs.p99 ?? "–"} ms after it`;
  return [
    (refused === 0 && burst.notStarted + after.notStarted === 0 ? pass : fail)("noisy neighbour: none of its starts refused", refusals, { unfinished: unfinished.slice(0, 10) }),
    (burst.startToEndMs.n > 0 && (burst.startToEndMs.p99 ?? Infinity) < NEIGHBOUR_P99_LIMIT_MS && unfinished.length === 0 ? pass : fail)(
      `noisy neighbour: p99 start → end < ${NEIGHBOUR_P99_LIMIT_MS / 1000} s`,
      latency + (unfinished.length ? `; ${unfinished.length} not completed` : ""),
      { unfinished: unfinished.slice(0, 10), slowest: burst.slowest },
    ),
  ];
}
