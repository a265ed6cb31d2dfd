// The soak itself, between Shepherd's start and the final reading: the regular workload with its one restart, and
// beside it the burst, the noisy neighbour, the cron schedule, the supervisor's scenarios, the map phase, the
// parent/child phase, the pool phase, the bulk phase, the arrivals phase and the samplers of the alarms and the queue's
// lag; then everything beside the workload is brought to its end.
import { startAlarmSampler } from "./alarms.ts";
import type { AlarmSamples } from "./alarms.ts";
import type { ChaosOptions } from "./args.ts";
import { buildArrivals } from "./arrivals.ts";
import type { ArrivalsPlan } from "./arrivals.ts";
import { driveArrivals } from "./arrivals-driver.ts";
import type { ArrivalsPhase, ArrivalsRun } from "./arrivals-driver.ts";
import { buildBurstWorkflows, driveBurst } from "./burst.ts";
import type { Burst, BurstRun } from "./burst.ts";
import { buildBulkWorkflows } from "./bulk.ts";
import { driveBulk } from "./bulk-driver.ts";
import type { BulkPhase, BulkRun } from "./bulk-driver.ts";
import { createClient } from "./client.ts";
import type { ShepherdClient } from "./client.ts";
import type { SoakWorkflow } from "./definitions.ts";
import { startDispatchSampler } from "./dispatch.ts";
import type { DispatchSamples } from "./dispatch.ts";
import type { Hosts } from "./hosts.ts";
import { LANGUAGE_SHARE } from "./language.ts";
import { buildParentFamily } from "./children.ts";
import type { ParentFamily } from "./children.ts";
import { driveParents } from "./children-driver.ts";
import type { ChildRun } from "./children-driver.ts";
import { buildMapWorkflows } from "./map.ts";
import { driveMaps } from "./map-driver.ts";
import type { MapRun } from "./map-driver.ts";
import { driveNeighbour } from "./neighbour.ts";
import type { NeighbourRecord } from "./neighbour.ts";
import { buildPoolWorkflows } from "./pool.ts";
import { drivePool } from "./pool-driver.ts";
import type { PoolPhase, PoolRun } from "./pool-driver.ts";
import { restarter } from "./restart.ts";
import type { Restarter } from "./restart.ts";
import { newResult } from "./results.ts";
import type { WorkflowResult } from "./results.ts";
import type { ScheduleResult } from "./schedule-end.ts";
import { startSchedule } from "./schedule-run.ts";
import type { ScheduleHandle } from "./schedule-run.ts";
import { SCHEDULE_KIND, scheduleWorkflowEntry } from "./schedule.ts";
import { API_TOKEN } from "./shepherd.ts";
import type { Shepherd } from "./shepherd.ts";
import { driveSupervision, planSupervision } from "./supervision.ts";
import type { SupervisionPlan, SupervisionRun } from "./supervision.ts";
import { buildWorkflows } from "./workload.ts";
import { driveWorkload } from "./workload-driver.ts";

/**
 * Open burst workflows added to each alarm sample (rotating through them): sampling thousands every 2 s
 * would load the engine more than the burst does. Every workflow is still read at the end.
 */
const BURST_ALARM_SAMPLE = 20;
/** The same for the supervision scenarios' workflows (up to about 20 at once, most of them parked). */
const SUPERVISION_ALARM_SAMPLE = 8;
/** Every open map workflow (a handful): their alarms run their windows of items. */
const MAP_ALARM_SAMPLE = 5;
/** The open parents: a few at a time, rotating. */
const PARENT_ALARM_SAMPLE = 4;
/** The open pool workflows: a few at a time, rotating. */
const POOL_ALARM_SAMPLE = 4;
/** The open arrivals (the delayed ones' alarms start them): a few at a time, rotating. */
const ARRIVALS_ALARM_SAMPLE = 4;
/** The final reading of views and histories, and the checks' own reads, per burst workflow (2 cores, loaded). */
const CHECKS_RESERVE_PER_BURST_MS = 25;
/** The same per workflow of the bulk phase: each is read at the end like any other. */
const CHECKS_RESERVE_PER_BULK_MS = 25;

export interface SoakSetup {
  options: ChaosOptions;
  hosts: Hosts;
  shepherdUrl: string;
  shepherd: Shepherd;
  runStart: number;
  /** The run's temp dir: the pool's workers log there. */
  workDir: string;
  log: (message: string) => void;
}

/** What the soak's families are, from the seed. */
export interface SoakPlan {
  workflows: SoakWorkflow[];
  burstWorkflows: SoakWorkflow[];
  supervisionPlan: SupervisionPlan;
  mapWorkflows: SoakWorkflow[];
  parentFamily: ParentFamily;
  poolWorkflows: SoakWorkflow[];
  bulkWorkflows: SoakWorkflow[];
  arrivals: ArrivalsPlan;
}

export interface SoakRun extends SoakPlan {
  client: ShepherdClient;
  /** Every family's workflows, the schedule's fires included. */
  allWorkflows: SoakWorkflow[];
  /** One per workflow started or meant to be. */
  results: WorkflowResult[];
  regular: WorkflowResult[];
  burstRun: BurstRun;
  supervisionRun: SupervisionRun;
  mapRun: MapRun;
  childRun: ChildRun;
  poolRun: PoolRun;
  bulkRun: BulkRun;
  arrivalsRun: ArrivalsRun;
  /** Whether the run asked for Shepherd's restart (it may still not have come). */
  restartAsked: boolean;
  neighbourRecords: NeighbourRecord[] | null;
  scheduleRun: ScheduleResult;
  alarms: AlarmSamples;
  dispatch: DispatchSamples;
  restarts: Restarter;
  soakMs: number;
  /** Epoch ms by which the checks must be done. */
  bound: number;
}

/** What runs beside the regular workload. */
interface Beside {
  schedule: ScheduleHandle;
  supervision: ReturnType<typeof driveSupervision>;
  maps: ReturnType<typeof driveMaps>;
  parents: ReturnType<typeof driveParents>;
  pool: PoolPhase;
  bulk: BulkPhase;
  arrivals: ArrivalsPhase;
  burst: Burst | null;
  neighbour: Promise<NeighbourRecord[]> | null;
  alarms: ReturnType<typeof startAlarmSampler>;
  dispatch: ReturnType<typeof startDispatchSampler>;
}

/** Runs the soak until its workload is done and everything beside it has ended. */
export async function runSoak(setup: SoakSetup): Promise<SoakRun> {
  const { options, runStart, log } = setup;
  const client = createClient(setup.shepherdUrl);
  const plan = planSoak(options, setup.hosts);
  const bound = runStart + options.maxSeconds * 1000;
  // Time kept back at the end for reading every workflow and running the checks.
  const checksReserveMs = Math.max(12_000, options.maxSeconds * 140) + options.burst * CHECKS_RESERVE_PER_BURST_MS + options.bulkWorkflows * CHECKS_RESERVE_PER_BULK_MS;
  const deadline = bound - checksReserveMs;
  const restarts = restarter(setup.shepherd, runStart, log);
  const soakStart = Date.now();
  const inFlight = new Set<string>();
  const beside = await startBeside(setup, client, plan, { restarts, soakStart, deadline, inFlight });
  log(`running ${plan.workflows.length} workflows, ${options.concurrency} at a time` + (plan.burstWorkflows.length ? `, and a burst of ${plan.burstWorkflows.length} from ${options.burstClients} clients` : "") + (options.mapItems.length ? `; maps of ${options.mapItems.join(", ")} items` : "") + (options.parents ? `; ${options.parents} parents of child workflows` : "") + (options.poolWorkflows ? `; ${options.poolWorkflows} pool workflows` : "") + (options.bulkWorkflows ? `; ${options.bulkWorkflows} workflows for a bulk cancel` : "") + (options.arrivals ? `; ${options.arrivals} arrivals through each door` : ""));
  const regular = await driveWorkload({
    client,
    workflows: plan.workflows,
    concurrency: options.concurrency,
    deadline,
    restartAfter: options.restart ? Math.ceil(plan.workflows.length / 2) : null,
    // With a burst the crash comes when its backlog peaks, if that is before halfway: a kill that finds
    // thousands of queued messages is the one that tests re-dispatch of lost dispatches.
    restartSignal: beside.burst?.allStarted.then((s) => `the burst's ${s.size} starts all answered, its backlog at its peak`),
    restart: restarts.restart,
    onStarted: (id) => inFlight.add(id),
    onEnded: (id) => inFlight.delete(id),
    onProgress: ({ started, done, total }) => log(`${started}/${total} started, ${done} terminal`),
  });
  // A map that stopped moving is not waited for past this point (map-driver.ts).
  beside.maps.windDown();
  // A pool wave the restart did not start (it never came) starts now.
  beside.pool.windDown();
  // So does a bulk job the restart did not create.
  beside.bulk.windDown();
  // So do the arrivals held for it.
  beside.arrivals.windDown();
  // The schedule's end: last reading, delete, its workflows followed until they end and one more grid time
  // has passed (at least 12 s, at most 25 s, and never into the second half of the checks' reserve).
  const scheduleUntil = Math.max(Date.now() + 12_000, Math.min(Date.now() + 25_000, bound - checksReserveMs / 2));
  const { scheduleWorkflows, scheduleResults, ...ended } = await endBeside(beside, scheduleUntil, setup.hosts.remote.url);
  const soakMs = Date.now() - soakStart;
  log(`soak over after ${(soakMs / 1000).toFixed(1)} s; reading every workflow and its history`);
  const { parents, children } = plan.parentFamily;
  const allWorkflows = [...plan.workflows, ...plan.burstWorkflows, ...plan.supervisionPlan.workflows, ...plan.mapWorkflows, ...parents, ...children, ...plan.poolWorkflows, ...plan.bulkWorkflows, ...plan.arrivals.workflows, ...scheduleWorkflows];
  const { parentResults, childResults } = ended.childRun;
  const results = [...regular, ...ended.burstRun.results, ...ended.supervisionRun.results, ...ended.mapRun.results, ...parentResults, ...childResults, ...ended.poolRun.results, ...ended.bulkRun.results, ...ended.arrivalsRun.results, ...scheduleResults];
  return { ...plan, ...ended, client, allWorkflows, results, regular, restarts, restartAsked: options.restart, soakMs, bound };
}

function planSoak(options: ChaosOptions, hosts: Hosts): SoakPlan {
  const { seed, remoteFaults } = options;
  const remoteUrl = hosts.remote.url;
  return {
    workflows: buildWorkflows({ seed, count: options.workflows, remoteUrl, remoteFaults, languageShare: LANGUAGE_SHARE }),
    burstWorkflows: buildBurstWorkflows({ seed, count: options.burst, remoteUrl, remoteFaults }),
    supervisionPlan: planSupervision({ seed, preset: options.preset, remoteUrl, secondHostUrl: hosts.secondHost.url }),
    mapWorkflows: buildMapWorkflows({ seed, sizes: options.mapItems, remoteUrl }),
    parentFamily: buildParentFamily({ seed, count: options.parents, remoteUrl }),
    poolWorkflows: buildPoolWorkflows({ seed, count: options.poolWorkflows }),
    bulkWorkflows: buildBulkWorkflows({ seed, count: options.bulkWorkflows }),
    arrivals: buildArrivals({ seed, count: options.arrivals, remoteUrl }),
  };
}

/** Starts everything that runs beside the regular workload; all of it pauses while Shepherd restarts. */
async function startBeside(setup: SoakSetup, client: ShepherdClient, plan: SoakPlan, run: { restarts: Restarter; soakStart: number; deadline: number; inFlight: Set<string> }): Promise<Beside> {
  const { hosts, log, options } = setup;
  const { restarts, soakStart, deadline, inFlight } = run;
  const paused = restarts.restarting;
  // The cron schedule fires every 10 s from now until it is deleted after the soak, the restart included.
  const schedule = await startSchedule({ client, remoteUrl: hosts.remote.url, paused, log });
  // Stalls, lost answers and the host that goes down run beside everything else, restart included.
  const supervision = driveSupervision({ client, plan: plan.supervisionPlan, origin: soakStart, deadline, secondHost: hosts.secondHost, mainHost: new URL(hosts.remote.url).host, log });
  // Awaited after the regular workload; a failure meanwhile must not count as an unhandled rejection.
  supervision.done.catch(() => {});
  // The map phase starts with the soak, so its faults and the restart find its items in flight.
  const maps = driveMaps({ client, workflows: plan.mapWorkflows, deadline });
  maps.done.catch(() => {});
  // So does the parent/child phase: the restart and the Worker's faults find parents and children mid-flight.
  const restartOver = (): boolean => !options.restart || restarts.record() !== null;
  const parents = driveParents({ client, family: plan.parentFamily, deadline, restartOver });
  parents.done.catch(() => {});
  // And the pool phase: its workers poll through the restart, whose kill finds the wave's tasks being handed out.
  const pool = drivePool({ client, workflows: plan.poolWorkflows, restart: options.restart, deadline, workers: { dir: setup.workDir, shepherdUrl: setup.shepherdUrl, remoteUrl: hosts.remote.url, token: API_TOKEN, log } });
  pool.done.catch(() => {});
  restarts.beforeKill(pool.beforeKill);
  // And the bulk phase: its workflows start first (the burst waits), its job just before the kill, which finds it part
  // way (case 34).
  const bulk = driveBulk({ client, workflows: plan.bulkWorkflows, restart: options.restart, deadline });
  bulk.done.catch(() => {});
  restarts.beforeKill(bulk.beforeKill);
  // And the arrivals: delayed starts, a batch and start messages sent last before the kill (their delays count from
  // it), what follows it once Shepherd is back.
  const arrivals = driveArrivals({ client, plan: plan.arrivals, restart: options.restart, restartOver, deadline, notices: () => hosts.remote.notices() });
  arrivals.done.catch(() => {});
  restarts.lastBeforeKill(arrivals.beforeKill);
  const burst = plan.burstWorkflows.length
    ? driveBurst({
        client,
        workflows: plan.burstWorkflows,
        clients: options.burstClients,
        deadline,
        paused,
        // After the bulk family's starts: beside the burst's, they raised everything the burst already strains.
        after: bulk.familyStarted,
        onProgress: ({ started, terminal, backPressure, total }) => log(`burst: ${started}/${total} started (${backPressure} back-pressure answers), ${terminal} terminal`),
      })
    : null;
  const alarms = startAlarmSampler({
    client,
    inFlight: () => [...inFlight, ...(burst?.openSample(BURST_ALARM_SAMPLE) ?? []), ...supervision.openSample(SUPERVISION_ALARM_SAMPLE), ...maps.openSample(MAP_ALARM_SAMPLE), ...parents.openSample(PARENT_ALARM_SAMPLE), ...pool.openSample(POOL_ALARM_SAMPLE), ...arrivals.openSample(ARRIVALS_ALARM_SAMPLE), ...schedule.open()],
    paused,
  });
  const dispatch = startDispatchSampler({ client, paused, origin: soakStart });
  // A second tenant starting one workflow a second through the burst: what the burst costs everyone else.
  const neighbour = burst ? driveNeighbour({ baseUrl: setup.shepherdUrl, remoteUrl: hosts.quietHost.url, runId: setup.runStart, burstDone: burst.done, deadline, paused }) : null;
  neighbour?.catch(() => {});
  return { schedule, supervision, maps, parents, pool, bulk, arrivals, burst, neighbour, alarms, dispatch };
}

/** What came of everything beside the workload. */
type Ended = Pick<SoakRun, "burstRun" | "supervisionRun" | "mapRun" | "childRun" | "poolRun" | "bulkRun" | "arrivalsRun" | "neighbourRecords" | "scheduleRun" | "alarms" | "dispatch"> & {
  scheduleWorkflows: SoakWorkflow[];
  scheduleResults: WorkflowResult[];
};

/** Waits for everything beside the workload, ends the schedule and the samplers; the schedule's fires join the families. */
async function endBeside(beside: Beside, scheduleUntil: number, remoteUrl: string): Promise<Ended> {
  const burstRun: BurstRun = beside.burst ? await beside.burst.done : { results: [], summary: null };
  const supervisionRun = await beside.supervision.done;
  const mapRun = await beside.maps.done;
  const childRun = await beside.parents.done;
  const poolRun = await beside.pool.done;
  const bulkRun = await beside.bulk.done;
  const arrivalsRun = await beside.arrivals.done;
  const neighbourRecords = beside.neighbour ? await beside.neighbour : null;
  const scheduleRun = await beside.schedule.stop({ until: scheduleUntil });
  const scheduleWorkflows = scheduleRun.workflowIds.map((id) => scheduleWorkflowEntry(id, remoteUrl));
  const scheduleResults = scheduleWorkflows.map((wf) => ({ ...newResult(wf.id, SCHEDULE_KIND), started: true }));
  const alarms = await beside.alarms.stop();
  const dispatch = await beside.dispatch.stop();
  return { burstRun, supervisionRun, mapRun, childRun, poolRun, bulkRun, arrivalsRun, neighbourRecords, scheduleRun, scheduleWorkflows, scheduleResults, alarms, dispatch };
}
