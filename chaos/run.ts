// `npm run chaos`: the chaos soak of rows 25 and 26 of the fault matrix (docs/reliability.md). One command that starts a
// misbehaving remote service and a frozen copy of Shepherd under `wrangler dev`, runs a bounded load of sagas
// through remote and Worker-side faults with one crash-restart in the middle and, at the same time, a burst
// of extra workflows started at once, then checks what Temporal's omes and Restate's Jepsen checks would:
// everything ended, nothing happened twice, the index agrees, supervision never lapsed, the run made
// progress, the burst's backlog failed nobody, and the v1.1 supervisor catches a stalled agent, verifies an
// answer that was lost, and parks work for a host that is down instead of burning its attempts. Prints one
// table, writes chaos/results/latest.json, and exits non-zero when a check fails (or was skipped because its
// API is missing, unless --allow-skips).
//
//   npm run chaos                      # 200 workflows, 10 concurrent, burst of 2000, one restart
//   npm run chaos -- --quick           # CI: 30 workflows, 5 concurrent, burst of 300
//   npm run chaos -- --help
//
// The soak's own logic is in chaos/ (see chaos/README.md, "What runs"); process groups, the project
// snapshot and `wrangler dev`, flags, ports, the fake remote's server, waiting and statistics are shared
// with the bench in scripts/lib/.
/* global URL, console, process, setTimeout */
import { copyFileSync, existsSync, mkdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { join } from "node:path";
import { mapPool } from "../scripts/lib/async.ts";
import { readCommandLine } from "../scripts/lib/cli.ts";
import { writeJson } from "../scripts/lib/output-files.ts";
import { assertPortsFree } from "../scripts/lib/ports.ts";
import { atInterrupt, installCleanup, killAllGroups } from "../scripts/lib/process-groups.ts";
import { startRemote } from "./remote.ts";
import { startAlarmSampler } from "./lib/alarms.ts";
import { buildBurstWorkflows, driveBurst } from "./lib/burst.ts";
import { checkAlarms } from "./lib/checks/alarms.ts";
import { checkIndex } from "./lib/checks/d1-index.ts";
import { checkEffects } from "./lib/checks/effects.ts";
import { checkEvents } from "./lib/checks/events.ts";
import { checkProgress, checkServerFaults, checkTerminal } from "./lib/checks/outcomes.ts";
import { checkScheduleFires } from "./lib/checks/schedule-fires.ts";
import { checkScheduleToStart } from "./lib/checks/schedule-to-start.ts";
import { checkNoQueueAttempts, checkSleeps } from "./lib/checks/sleeps.ts";
import { createClient } from "./lib/client.ts";
import { startDispatchSampler } from "./lib/dispatch.ts";
import { idsNamedBy, timelines } from "./lib/evidence.ts";
import { measure } from "./lib/metrics.ts";
import { LANGUAGE_SHARE } from "./lib/language.ts";
import { renderReport } from "./lib/report.ts";
import { burstReport, languageReport, scheduleReport, sumCounts } from "./lib/report-sections.ts";
import { driveSupervision, planSupervision } from "./lib/supervision.ts";
import { checkBreaker, checkLostAnswers, checkStalls } from "./lib/checks/supervision.ts";
import { supervisionFacts } from "./lib/supervision-facts.ts";
import { NO_REMOTE_FAULTS } from "./lib/faults.ts";
import { checkNeighbour, driveNeighbour, neighbourReport } from "./lib/neighbour.ts";
import { mergeRemoteStats } from "./lib/breaker.ts";
import { SCHEDULE_ID, SCHEDULE_KIND, scheduleWorkflowEntry } from "./lib/schedule.ts";
import { startSchedule } from "./lib/schedule-run.ts";
import { applyMigrations, createSandbox, startShepherd } from "./lib/shepherd.ts";
import { buildWorkflows } from "./lib/workload.ts";
import { driveWorkload } from "./lib/workload-driver.ts";

const repoRoot = fileURLToPath(new URL("..", import.meta.url));
const resultsDir = fileURLToPath(new URL("./results/", import.meta.url));
const PROGRESS_THRESHOLD = 0.95;
/** Beyond the bound, the watchdog kills everything: the harness must stop by itself even if it hangs. */
const WATCHDOG_GRACE_S = 45;
/**
 * Open burst workflows added to each alarm sample (rotating through them): sampling thousands every 2 s
 * would load the engine more than the burst does. Every workflow is still read at the end.
 */
const BURST_ALARM_SAMPLE = 20;
/** The same for the supervision scenarios' workflows (up to about 20 at once, most of them parked). */
const SUPERVISION_ALARM_SAMPLE = 8;
/** The final reading of views and histories, and the checks' own reads, per burst workflow (2 cores, loaded). */
const CHECKS_RESERVE_PER_BURST_MS = 25;

const log = (message) => console.log(`chaos: ${message}`);

async function main() {
  // The flags import the fault names from src/dev/fault-names.ts, which only a node that strips types can load:
  // asked first, so an old node gets this line rather than a loader error.
  if (!process.features.typescript) {
    console.error(`chaos: node ${process.versions.node} cannot load src/dev/fault-names.ts and is too old for wrangler; run it as \`npm run chaos\` (node from devDependencies)`);
    return 2;
  }
  const { parseArgs, PORT_RANGE, SERVER_FAULT_KEYS, USAGE } = await import("./lib/args.ts");
  const { options, exitCode } = readCommandLine(process.argv.slice(2), { tool: "chaos", usage: USAGE, parse: parseArgs });
  if (!options) return exitCode;
  installCleanup("chaos");
  mkdirSync(resultsDir, { recursive: true });
  const runStart = Date.now();
  const bound = runStart + options.maxSeconds * 1000;
  // Time kept back at the end for reading every workflow and running the checks.
  const checksReserveMs = Math.max(12_000, options.maxSeconds * 140) + options.burst * CHECKS_RESERVE_PER_BURST_MS;
  setTimeout(() => {
    console.error(`chaos: watchdog: still running ${WATCHDOG_GRACE_S} s past the ${options.maxSeconds} s bound; killing everything`);
    killAllGroups();
    process.exit(3);
  }, (options.maxSeconds + WATCHDOG_GRACE_S) * 1000).unref();

  const ports = { shepherd: options.portBase, inspector: options.portBase + 1, remote: options.portBase + 2, secondHost: options.portBase + 3, quietHost: options.portBase + 4 };
  await assertPortsFree(Object.values(ports), { tool: "chaos", range: PORT_RANGE });
  const shepherdUrl = `http://127.0.0.1:${ports.shepherd}`;
  // The schedule's workflow ids carry the fire time, so its declines could not be predicted: it has none.
  const remote = await startRemote({ port: ports.remote, seed: options.seed, faults: options.remoteFaults, neverDecline: (key) => key.startsWith(`${SCHEDULE_ID}:`), shepherdUrl });
  // The breaker scenario's host: the same remote without faults, down for 20 s when lib/breaker.ts says.
  const secondHost = await startRemote({ port: ports.secondHost, seed: options.seed, faults: NO_REMOTE_FAULTS, shepherdUrl });
  // The noisy neighbour's host: no faults, and no other traffic, so its latency is the engine's alone.
  const quietHost = await startRemote({ port: ports.quietHost, seed: options.seed, faults: NO_REMOTE_FAULTS, shepherdUrl });
  log(`remote service on ${remote.url} (seed ${options.seed}), the breaker scenario's host on ${secondHost.url}, the noisy neighbour's on ${quietHost.url}`);

  const sandbox = createSandbox(repoRoot, { faultNames: SERVER_FAULT_KEYS });
  if (!options.keep) atInterrupt(sandbox.remove);
  let shepherd = null;
  try {
    log(`project copied to ${sandbox.dir} (commit ${sandbox.source.commit}, ${sandbox.source.dirtyFiles} uncommitted file(s)); applying D1 migrations`);
    await applyMigrations(sandbox);
    shepherd = await startShepherd(sandbox, { port: ports.shepherd, inspectorPort: ports.inspector, serverFaults: options.serverFaults });
    log(`shepherd on http://127.0.0.1:${ports.shepherd} after ${shepherd.readyMs} ms; FAULTS hook ${sandbox.features.faultsVar ? "present" : "absent in this build"}`);

    const client = createClient(shepherdUrl);
    const workflows = buildWorkflows({ seed: options.seed, count: options.workflows, remoteUrl: remote.url, remoteFaults: options.remoteFaults, languageShare: LANGUAGE_SHARE });
    const burstWorkflows = buildBurstWorkflows({ seed: options.seed, count: options.burst, remoteUrl: remote.url, remoteFaults: options.remoteFaults });
    const supervisionPlan = planSupervision({ seed: options.seed, preset: options.preset, remoteUrl: remote.url, secondHostUrl: secondHost.url });
    const allWorkflows = [...workflows, ...burstWorkflows, ...supervisionPlan.workflows];
    let restart = null;
    let restarting = false;
    const inFlight = new Set();

    const doRestart = async (reason) => {
      restarting = true;
      const from = Date.now();
      log(`restarting shepherd (kill -9 of the wrangler process group, same --persist-to): ${reason}`);
      await shepherd.restart({ crash: true });
      const to = Date.now();
      restart = { atMs: from - runStart, downMs: to - from, reason, outage: { from, to } };
      restarting = false;
      log(`shepherd healthy again after ${to - from} ms`);
    };

    const soakStart = Date.now();
    const deadline = bound - checksReserveMs;
    let burst = null;
    // The cron schedule fires every 10 s from now until it is deleted after the soak, the restart included.
    const schedule = await startSchedule({ client, remoteUrl: remote.url, paused: () => restarting, log });
    // Stalls, lost answers and the host that goes down run beside everything else, restart included.
    const supervision = driveSupervision({ client, plan: supervisionPlan, origin: soakStart, deadline, secondHost, mainHost: new URL(remote.url).host, log });
    // Awaited after the regular workload; a failure meanwhile must not count as an unhandled rejection.
    supervision.done.catch(() => {});
    const sampler = startAlarmSampler({
      client,
      inFlight: () => [...inFlight, ...(burst?.openSample(BURST_ALARM_SAMPLE) ?? []), ...supervision.openSample(SUPERVISION_ALARM_SAMPLE), ...schedule.open()],
      paused: () => restarting,
    });
    const dispatchSampler = startDispatchSampler({ client, paused: () => restarting, origin: soakStart });
    log(`running ${workflows.length} workflows, ${options.concurrency} at a time` + (burstWorkflows.length ? `, and a burst of ${burstWorkflows.length} from ${options.burstClients} clients` : ""));
    if (burstWorkflows.length) {
      burst = driveBurst({
        client,
        workflows: burstWorkflows,
        clients: options.burstClients,
        deadline,
        paused: () => restarting,
        onProgress: ({ started, terminal, backPressure, total }) => log(`burst: ${started}/${total} started (${backPressure} back-pressure answers), ${terminal} terminal`),
      });
    }
    // A second tenant starting one workflow a second through the burst: what the burst costs everyone else.
    const neighbour = burst ? driveNeighbour({ baseUrl: shepherdUrl, remoteUrl: quietHost.url, runId: runStart, burstDone: burst.done, deadline, paused: () => restarting }) : null;
    neighbour?.catch(() => {});
    const regular = await driveWorkload({
      client,
      workflows,
      concurrency: options.concurrency,
      deadline,
      restartAfter: options.restart ? Math.ceil(workflows.length / 2) : null,
      // With a burst the crash comes when its backlog peaks, if that is before halfway: a kill that finds
      // thousands of queued messages is the one that tests re-dispatch of lost dispatches.
      restartSignal: burst?.allStarted.then((s) => `the burst's ${s.size} starts all answered, its backlog at its peak`),
      restart: doRestart,
      onStarted: (id) => inFlight.add(id),
      onEnded: (id) => inFlight.delete(id),
      onProgress: ({ started, done, total }) => log(`${started}/${total} started, ${done} terminal`),
    });
    const burstRun = burst ? await burst.done : { results: [], summary: null };
    const supervisionRun = await supervision.done;
    const neighbourRecords = neighbour ? await neighbour : null;
    // The schedule's end: last reading, delete, its workflows followed until they end and one more grid time
    // has passed (at least 12 s, at most 25 s, and never into the second half of the checks' reserve).
    const scheduleRun = await schedule.stop({ until: Math.max(Date.now() + 12_000, Math.min(Date.now() + 25_000, bound - checksReserveMs / 2)) });
    const scheduleWorkflows = scheduleRun.workflowIds.map((id) => scheduleWorkflowEntry(id, remote.url));
    allWorkflows.push(...scheduleWorkflows);
    const results = [...regular, ...burstRun.results, ...supervisionRun.results, ...scheduleWorkflows.map((wf) => ({ id: wf.id, kind: SCHEDULE_KIND, started: true }))];
    await sampler.stop();
    const dispatch = await dispatchSampler.stop();
    const soakMs = Date.now() - soakStart;
    log(`soak over after ${(soakMs / 1000).toFixed(1)} s; reading every workflow and its history`);

    // The final word of each object: its view and whole history.
    const readStart = Date.now();
    const finals = await mapPool(results, 10, async (result) => {
      const res = await client.getWorkflow(result.id);
      const history = res.status === 200 ? await client.getHistory(result.id) : { events: [] };
      return { id: result.id, kind: result.kind ?? "soak", started: result.started, view: res.status === 200 ? res.body : null, readStatus: res.status, events: history.events, language: result.language };
    });
    const readMs = Date.now() - readStart;
    // The effects, key checks and timelines cover both hosts; the report's remote figures are the main one's.
    const mainRemoteStats = remote.stats();
    const secondHostStats = secondHost.stats();
    const remoteStats = mergeRemoteStats(mainRemoteStats, secondHostStats);
    const neighbourSeen = neighbourRecords && neighbourReport(neighbourRecords, restart?.outage ?? null);
    const supervisionSeen = supervisionFacts({ plan: supervisionPlan, run: supervisionRun, finals, remoteStats, secondHostStats });

    const checks = [
      checkTerminal(results, finals),
      checkEffects(remoteStats, finals, allWorkflows),
      await checkIndex(client, finals),
      await checkAlarms(client, finals, sampler.state),
      checkProgress(finals, allWorkflows, PROGRESS_THRESHOLD),
      checkScheduleToStart(finals, allWorkflows),
      checkEvents(finals, allWorkflows),
      checkSleeps(finals, allWorkflows, restart?.outage ?? null),
      checkNoQueueAttempts(finals, allWorkflows, remoteStats),
      checkScheduleFires(scheduleRun, finals, restart?.outage ?? null),
      checkStalls(supervisionSeen, restart?.outage ?? null),
      checkLostAnswers(supervisionSeen),
      checkBreaker(supervisionSeen.breaker),
      checkServerFaults(sandbox.features, options.serverFaults),
      ...(neighbourSeen ? checkNeighbour(neighbourSeen) : []),
    ];
    const failed = checks.filter((c) => c.status === "fail");
    const skippedChecks = checks.filter((c) => c.status === "skipped");
    const verdict = failed.length
      ? `FAIL (${failed.map((c) => c.name).join("; ")})`
      : skippedChecks.length
        ? `${options.allowSkips ? "PASS with skips" : "FAIL: skipped"} (${skippedChecks.map((c) => c.name).join("; ")})`
        : "PASS";

    const outcomes = {};
    for (const f of finals) {
      const status = f.view?.status ?? (f.started ? "unreadable" : "not started");
      outcomes[status] = (outcomes[status] ?? 0) + 1;
    }
    const measurements = measure(finals, restart?.outage ?? null);
    const burstFinals = finals.filter((f) => f.kind === "burst");
    // Detections later than the supervisor's 1 s promise that the restart does not explain get timelines too.
    const lateDetections = measurements.slowestDetections.filter((d) => !d.inOutage && d.overdueMs > 1_000).map((d) => d.id);
    const evidenceIds = [...new Set([...idsNamedBy(checks, (id) => finals.some((f) => f.id === id && f.view)), ...lateDetections.slice(0, 3)])];
    const report = {
      runAt: new Date(runStart).toISOString(),
      verdict,
      config: { ...options, thresholds: { progress: PROGRESS_THRESHOLD, alarmOverdueMs: 5_000 } },
      source: sandbox.source,
      features: sandbox.features,
      timing: { soakMs, readMs, checksMs: Date.now() - readStart - readMs, totalMs: Date.now() - runStart, shepherdReadyMs: shepherd.readyMs },
      restart,
      outcomes,
      declinedByDesign: allWorkflows.filter((wf) => wf.declinedStep).length,
      burst: burstRun.summary && burstReport(burstRun.summary, burstFinals, burstWorkflows, restart?.outage ?? null),
      neighbour: neighbourSeen,
      schedule: scheduleReport(scheduleRun, finals, restart?.outage ?? null),
      dispatch,
      // What the language workflows were (sleep, event timing) and every event sent with its answer.
      language: languageReport(workflows, finals, restart?.outage ?? null),
      // Stalls, lost answers and the host that went down: what each workflow of theirs showed.
      supervision: { stalls: supervisionSeen.stalls, lostAnswers: supervisionSeen.lostAnswers, strayStalls: supervisionSeen.strayStalls.slice(0, 20), breaker: supervisionSeen.breaker },
      // The regular workload meets the same front door; its back-pressure answers are counted apart.
      regularBackPressure: sumCounts(regular.map((r) => r.backPressure ?? {})),
      checks,
      measurements,
      // The workflows the failed checks name and the latest detections, each as one merged engine + remote timeline.
      evidence: timelines(evidenceIds, finals, remoteStats, restart?.outage ?? null),
      remote: {
        totals: mainRemoteStats.totals,
        secondHostTotals: secondHostStats.totals,
        unkeyedRequests: remoteStats.unkeyedRequests,
        // Only the keys worth a look: replayed, faulted more than once, applied twice or malformed.
        notableKeys: Object.values(remoteStats.keys)
          .filter((k) => k.replays > 0 || k.applied > 1 || !k.wellFormed)
          .slice(0, 200),
      },
    };
    const resultsPath = join(resultsDir, "latest.json");
    writeJson(resultsPath, report);
    console.log(renderReport(report));
    console.log(`\nchaos: report written to ${resultsPath}; wrangler log in ${join(resultsDir, "wrangler.log")}`);
    return failed.length || (skippedChecks.length && !options.allowSkips) ? 1 : 0;
  } finally {
    await shepherd?.stop();
    await remote.close();
    await secondHost.close();
    await quietHost.close();
    if (existsSync(sandbox.logFile)) copyFileSync(sandbox.logFile, join(resultsDir, "wrangler.log"));
    if (options.keep) log(`kept ${sandbox.dir}`);
    else sandbox.remove();
  }
}

main().then(
  (code) => {
    killAllGroups();
    process.exit(code);
  },
  (error) => {
    console.error("chaos: run failed:", error);
    killAllGroups();
    process.exit(1);
  },
);
