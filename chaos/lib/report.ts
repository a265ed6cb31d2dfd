// The run's one summary as the console shows it: a table of checks and one of measurements (run.ts
// writes the same report as JSON).
import type { Distribution } from "./metrics.ts";
import type { SoakReport } from "./soak-report.ts";
import type { PhaseFigures } from "./neighbour.ts";
import { tally } from "./checks/check.ts";
import { childRows } from "./children-report.ts";
import { mapRows } from "./map-report.ts";
import { poolRows } from "./pool-report.ts";
import { bulkRows } from "./bulk-report.ts";
import { arrivalsRows } from "./arrivals-report.ts";

type Row = [string, string];

const ms = (v: number | null | undefined): string => (v === null || v === undefined ? "–" : `${Math.round(v)} ms`);
const dist = (d: Distribution, unit = ms): string => (d.n === 0 ? "no samples" : `p50 ${unit(d.p50)}, p99 ${unit(d.p99)}, max ${unit(d.max)} (n=${d.n})`);
const counts = (obj: Readonly<Record<string, number>>): string =>
  Object.entries(obj)
    .filter(([, n]) => n)
    .map(([k, n]) => `${k} ${n}`)
    .join(", ") || "none";

/** Rows of [label, value] for the measurements part of the table. */
function measurementRows(report: SoakReport): Row[] {
  const m = report.measurements;
  const r = report.remote.totals;
  const rows: Row[] = [
    ["outcomes", `${counts(report.outcomes)} (${report.declinedByDesign} declined by design)`],
    ["time", `soak ${(report.timing.soakMs / 1000).toFixed(1)} s, reading ${(report.timing.readMs / 1000).toFixed(1)} s, checks ${(report.timing.checksMs / 1000).toFixed(1)} s, whole run ${(report.timing.totalMs / 1000).toFixed(1)} s`],
    ["restart", report.restart ? `killed at +${(report.restart.atMs / 1000).toFixed(1)} s (${report.restart.reason}), healthy again after ${(report.restart.downMs / 1000).toFixed(1)} s` : "none"],
    ["failure detection (overdueMs)", dist(m.detectionLatencyMs)],
    ["  deadlines not near the restart", dist(m.detectionLatencyOutsideRestartMs)],
  ];
  for (const [kind, d] of Object.entries(m.detectionLatencyByTimeoutMs)) rows.push([`  ${kind}`, dist(d)]);
  rows.push(
    ["retry start lateness (vs nextRetryAt)", dist(m.retryStartLatenessMs)],
    ["recovery (failed attempt → success)", dist(m.recoveryMs)],
    ["workflow duration (created → ended)", dist(m.workflowDurationMs)],
    ["action attempts per step", m.actionAttemptsPerStep.n ? `mean ${m.actionAttemptsPerStep.mean}, max ${m.actionAttemptsPerStep.max}` : "–"],
    ["compensation attempts per step", m.compensationAttemptsPerStep.n ? `mean ${m.compensationAttemptsPerStep.mean}, max ${m.compensationAttemptsPerStep.max} (n=${m.compensationAttemptsPerStep.n})` : "–"],
    ["stale_report_rejected events", `${m.staleReportRejected}${m.staleReportRejected ? ` (${counts(m.staleReportRejectedByReport)})` : ""}`],
    ["remote faults, actions", counts(r.action.faults)],
    ["remote faults, compensations", counts(r.compensation.faults)],
    ["remote requests / effects", `actions ${r.action.requests} req → ${r.action.applied} effects; compensations ${r.compensation.requests} req → ${r.compensation.applied} effects`],
    ["replays (would-be duplicates)", `actions ${r.action.replays} (${r.action.replaysAfterDelivered} after a delivered 200), compensations ${r.compensation.replays} (${r.compensation.replaysAfterDelivered} after a delivered 200)`],
    ["server faults (FAULTS)", report.features.faultsVar ? counts(report.config.serverFaults) : `not in this build (asked: ${counts(report.config.serverFaults)})`],
  );
  rows.push(...languageRows(report));
  rows.push(...burstRows(report));
  rows.push(...neighbourRows(report));
  rows.push(...scheduleRows(report));
  rows.push(...supervisionRows(report));
  rows.push(...mapRows(report.maps ?? []));
  rows.push(...childRows(report.parents ?? []));
  rows.push(...poolRows(report.pool ?? null));
  rows.push(...bulkRows(report.bulk ?? null));
  rows.push(...arrivalsRows(report.arrivals ?? null));
  return rows;
}

/** Stalls, lost answers and the host that went down: what each scenario's workflows showed. */
function supervisionRows(report: SoakReport): Row[] {
  const s = report.supervision;
  if (!s) return [];
  const overdue = s.stalls.flatMap((c) => (c.stall ? [c.stall.overdueMs ?? NaN] : []));
  const stalled = overdue.length;
  const modes = counts(Object.fromEntries(["reset", "hang"].map((m) => [m, s.lostAnswers.filter((c) => c.mode === m).length])));
  const b = s.breaker;
  const rows: Row[] = [
    [
      "stalling agents (progressMs 3 s)",
      `${s.stalls.length}: ${stalled} stuck attempts stalled (${s.stalls.reduce((n, c) => n + c.stuckHeartbeatsAccepted, 0)} heartbeats accepted while stuck), ` +
        `overdue ${overdue.length ? `max ${ms(Math.max(...overdue))}` : "–"}; steps by attempts ${histogram(s.stalls.map((c) => c.attempts))}; stalls elsewhere ${s.strayStalls.length}`,
    ],
    [
      "lost answers + verify",
      `${s.lostAnswers.length} (${modes}): action requests ${s.lostAnswers.reduce((n, c) => n + c.actionRequests, 0)}, ` +
        `verify calls ${s.lostAnswers.reduce((n, c) => n + c.verifies, 0)} (${s.lostAnswers.reduce((n, c) => n + c.verifiesFound, 0)} found), step_verified ${s.lostAnswers.filter((c) => c.verifiedAttempts.length).length}`,
    ],
  ];
  if (b.skipped !== undefined) return [...rows, ["host down (circuit breaker)", `not run: ${b.skipped}`]];
  const opened = b.opened.map((o) => `+${seconds(o.afterDownMs)}`).join(", ") || "never";
  return [
    ...rows,
    [
      "host down (circuit breaker)",
      `${b.host} down ${seconds(b.outage.ms)} from its first call (${seconds(b.outage.downAfterStartMs)} after the batch's start), ${b.batch.length} workflows × 2 steps; ${b.answeredDown} calls reached it down (retrying on: up to ${b.batch.length * b.maxAttempts}); opened ${opened}; ` +
        `parked ${b.parkings}× (${b.stepsParked} steps, listing max ${b.maxParkedListed}); ${b.releases.failedProbes} failed probe(s); released from ${signedSeconds(b.releases.firstAfterUpMs)} to ${signedSeconds(b.releases.lastAfterUpMs)} of its recovery; ` +
        `attempts per step max ${b.maxUsed}/${b.maxAttempts}; ${b.samples} listing samples, at the end ${b.final?.target?.state ?? "not listed"}`,
    ],
  ];
}

/** "2×3, 3×1": how many have each value, as the burst's steps by attempts. */
function histogram(values: readonly number[]): string {
  const out: Record<string, number> = {};
  for (const v of values) out[v] = (out[v] ?? 0) + 1;
  return Object.entries(out).map(([v, n]) => `${v}×${n}`).join(", ") || "–";
}

/** The cron schedule: its fires by outcome, how their workflows ended, start lag, the catch-up and the delete. */
function scheduleRows(report: SoakReport): Row[] {
  const s = report.schedule;
  if (!s) return [];
  if (s.missingApi) return [["cron schedule", "n/a (no schedules API in this build)"]];
  if (s.createdAt === null) return [["cron schedule", `not created (${counts(s.create.statuses)})`]];
  const byOutcome = tally(s.fires.map((f) => f.outcome ?? "unrecorded"));
  const byStatus = tally(s.fires.flatMap((f) => (f.status ? [f.status] : [])));
  const lags = s.fires.flatMap((f) => (f.startLagMs !== null && !f.inOutage ? [f.startLagMs] : []));
  const caught = s.fires.filter((f) => f.inOutage);
  const reads = s.readings.filter((r) => r.status === 200).length;
  return [
    ["cron schedule", `${s.id} (${s.cron}, overlap ${s.overlap}, catch-up ${seconds(s.catchupWindowMs)}), ${s.fires.length} fires over ${seconds((s.delete?.answeredAt ?? s.followedUntil ?? 0) - s.createdAt)}; view read ${reads}/${s.readings.length} times`],
    ["  fires / their workflows", `${counts(byOutcome)} / ${counts(byStatus)}; ${s.listed?.count ?? "?"} listed by name`],
    [
      "  fire → workflow created",
      `${lags.length ? `p50 ${ms(lags.sort((a, b) => a - b)[Math.ceil(lags.length / 2) - 1])}, max ${ms(Math.max(...lags))} (n=${lags.length})` : "–"}; ` +
        `in the restart's outage: ${caught.length ? caught.map((f) => `${f.iso.slice(11, 19)} ${f.outcome ?? "unrecorded"} +${seconds(f.startLagMs)}`).join(", ") : "none"}`,
    ],
    ["  delete", s.delete ? `${counts(s.delete.statuses)} in ${ms((s.delete.answeredAt ?? s.delete.sentAt) - s.delete.sentAt)}; GET after it ${s.afterDelete}` : "–"],
  ];
}

/** The share of the regular workflows with a sleep and a wait for an event. */
function languageRows(report: SoakReport): Row[] {
  const l = report.language;
  if (!l || l.workflows === 0) return [["sleep + waitForEvent workflows", "none"]];
  // Due: the planned wake, or the sleep's start when its action before it ran late.
  const wakes = l.list.flatMap((x) => (x.wokeAt !== null && x.plannedWakeAt !== null ? [x.wokeAt - Math.max(x.plannedWakeAt, x.sleepingAt ?? 0)] : []));
  const a = l.acrossRestart;
  const waits = l.list.flatMap((x) => (x.event.timing === "late" && x.consumedAt !== null && x.waitingAt !== null ? [x.consumedAt - x.waitingAt] : []));
  return [
    [
      "sleep + waitForEvent workflows",
      `${l.workflows} (sleep: durationMs ${l.sleeps.duration}, until ${l.sleeps.until}; events: early ${l.events.early}, late ${l.events.late}, sent twice ${l.events.twice}); ` +
        `across the restart: ${a.sleeps} sleeping, ${a.waits} waiting, ${a.bufferedEvents} event(s) in the inbox`,
    ],
    ["  event answers (phase status)", counts(l.sendAnswers)],
    ["  sleeps: woke after due", wakes.length ? `min ${ms(Math.min(...wakes))}, max ${ms(Math.max(...wakes))} (n=${wakes.length})` : "–"],
    ["  late events: waiting → consumed", waits.length ? `max ${ms(Math.max(...waits))} (n=${waits.length})` : "–"],
  ];
}

const signedSeconds = (v: number | null | undefined): string => (v === null || v === undefined ? "–" : `${v < 0 ? "−" : "+"}${seconds(Math.abs(v))}`);
const seconds = (v: number | null | undefined): string => (v === null || v === undefined ? "–" : `${(v / 1000).toFixed(1)} s`);

/** The burst's own rows; the dispatch lag is the engine's side of the same story. */
function burstRows(report: SoakReport): Row[] {
  const b = report.burst;
  const d = report.dispatch;
  const lag =
    d?.available === true
      ? `max ${ms(d.maxLagMs)} at +${seconds(d.maxLagAtMs)} (bound ${ms(d.boundMs)}), back-pressure on in ${d.backPressureSamples}/${d.samples} samples`
      : d?.available === false
        ? `n/a (GET /dev/dispatch answered ${d.missingStatus})`
        : "n/a (no answer)";
  if (!b) return [["burst", "none (--burst 0)"], ["dispatch lag (GET /dev/dispatch, every 2 s)", lag]];
  const retryAfter = b.retryAfterMs ? ` (Retry-After ${seconds(b.retryAfterMs.min)}–${seconds(b.retryAfterMs.max)})` : "";
  const a = b.actionAttemptsPerStep;
  const histogram = Object.entries(b.actionAttemptsHistogram).map(([n, steps]) => `${n}×${steps}`).join(", ");
  const timeouts = Object.entries(b.timeouts).map(([kind, dist]) => `${kind} ${dist.n}`).join(", ") || "none";
  return [
    ["burst", `${b.size} workflows × ${b.steps} steps from ${b.clients} clients, no scheduleToStartMs`],
    ["  outcomes", `${counts(b.outcomes)} (${b.declinedByDesign} declined by design)`],
    ["  time to start them all", `${seconds(b.startMs)} (${b.started}/${b.size} started, ${b.startTries} requests)`],
    [
      "  back-pressure answers (429/503)",
      `${b.backPressureTotal}${b.backPressureTotal ? ` (${counts(b.backPressure)})${retryAfter}` : ""}` +
        (Object.keys(b.otherStartStatuses).length ? `; other start answers: ${counts(b.otherStartStatuses)}` : "") +
        `; regular workload's starts: ${counts(report.regularBackPressure ?? {})}`,
    ],
    ["  action attempts per step", a.n ? `mean ${a.mean}, p99 ${a.p99}, max ${a.max} (steps by attempts: ${histogram})` : "–"],
    ["  timeouts and missed heartbeats", timeouts],
    ["  workflow duration", dist(b.workflowDurationMs)],
    ["dispatch lag (GET /dev/dispatch, every 2 s)", lag],
  ];
}

/** The noisy neighbour: its refused starts and start → end latency during the burst and after it. */
function neighbourRows(report: SoakReport): Row[] {
  const n = report.neighbour;
  if (!n) return [];
  const phase = (p: PhaseFigures): string => `${p.starts} starts, ${p.refused} refused; start → end ${dist(p.startToEndMs)}${p.spannedRestart ? ` (${p.spannedRestart} spanning the restart apart)` : ""}`;
  return [
    [`noisy neighbour (tenant ${n.tenant}, 1 start/s)`, `during the burst: ${phase(n.burst)}`],
    ["", `after it: ${phase(n.after)}`],
  ];
}

function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => String(row[i]).length)));
  const line = (cells: readonly string[]): string => cells.map((cell, i) => String(cell).padEnd(widths[i] ?? 0)).join("  ").trimEnd();
  return [line(header), line(widths.map((w) => "-".repeat(w))), ...rows.map(line)].join("\n");
}

export function renderReport(report: SoakReport): string {
  const c = report.config;
  const lines = [
    "",
    `Shepherd chaos soak: seed ${c.seed}, ${c.workflows} workflows of 3–5 steps, ${c.concurrency} concurrent, ` +
      `${c.burst ? `a burst of ${c.burst} × 3 steps from ${c.burstClients} clients` : "no burst"}, ` +
      `${c.mapItems.length ? `maps of ${c.mapItems.join(", ")} items` : "no map"}, ${c.parents} parents of child workflows, ${c.poolWorkflows} pool workflows, ${c.bulkWorkflows} for a bulk cancel, ${c.arrivals} arrivals per door, ${c.restart ? "one restart" : "no restart"}, bound ${c.maxSeconds} s`,
    `Build under test: ${report.source.commit ?? "?"}${report.source.dirtyFiles ? ` with ${report.source.dirtyFiles} uncommitted file(s)` : ""}; FAULTS hook ${report.features.faultsVar ? "present" : "absent"}`,
    "",
    table(["CHECK", "RESULT", "DETAIL"], report.checks.map((check) => [check.name, check.status.toUpperCase(), check.detail])),
    "",
    table(["MEASUREMENT", "VALUE"], measurementRows(report)),
  ];
  for (const check of report.checks) if (check.status === "fail" && check.data) lines.push("", `${check.name}: details`, ...detailLines(check.data));
  lines.push("", `verdict: ${report.verdict}`);
  return lines.join("\n");
}

/** A failed check's data, a line per field: lists cut to their first 8 (the JSON has them all), empty ones left out. */
function detailLines(data: Readonly<Record<string, unknown>>): string[] {
  return Object.entries(data).flatMap(([key, value]) => {
    if (Array.isArray(value) && value.length === 0) return [];
    const shown: unknown = Array.isArray(value) ? value.slice(0, 8) : value;
    return [`  ${key}: ${JSON.stringify(shown)}${Array.isArray(value) && value.length > 8 ? ` … (${value.length} listed in the JSON)` : ""}`];
  });
}
