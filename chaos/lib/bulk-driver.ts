// The bulk phase's driver: starts the family first (a few at a time; the burst waits), waits until the index lists them all,
// and creates the bulk job when the restarter is about to kill Shepherd (`beforeKill`), so the kill finds the job at
// work; without a restart, or once the regular workload is over (`windDown`), it creates the job at once. From its
// creation until it is done it reads the job every second and asks the front door for a page of workflows twice a
// second: what the checks read (checks/bulk.ts).
import { mapPool, sampleEvery, sleep, within } from "../../scripts/lib/async.ts";
import type { BulkJobView } from "./api-shapes.ts";
import { bulkCancelRequest, BULK_NAME } from "./bulk.ts";
import type { ShepherdClient } from "./client.ts";
import type { SoakWorkflow } from "./definitions.ts";
import { newResult } from "./results.ts";
import type { WorkflowResult } from "./results.ts";
import { startUntilAccepted } from "./starts.ts";

/**
 * Starts in flight at once. The family's starts put nothing on the task queue, so back-pressure (for the name filling
 * it) never holds them. The burst waits for them (lib/soak.ts), so they are listed well before the restart.
 */
const START_CONCURRENCY = 8;
const LISTED_POLL_MS = 2_000;
const JOB_SAMPLE_MS = 1_000;
const PROBE_MS = 500;
/** The kill waits at most this long for the family to be started and listed, then this long for the job's first actions. */
const READY_WAIT_MS = 30_000;
const FIRST_ACTIONS_WAIT_MS = 10_000;
/** The job has acted on this many (or a tenth of the family) when the kill comes. */
const ACTED_BEFORE_KILL = 50;
const CREATE_TRIES = 10;

/** One reading of the job: its counts, or why there were none (the restart). */
export interface JobSample {
  at: number;
  httpStatus: number;
  job: Pick<BulkJobView, "status" | "matched" | "done" | "failed"> | null;
}

/** One question to the front door while the job ran: `GET /v1/workflows?limit=1`. */
export interface FrontDoorProbe {
  at: number;
  ms: number;
  /** 0: no answer (refused, reset, or none within the client's timeout). */
  status: number;
  error: string | null;
}

export interface BulkRun {
  results: WorkflowResult[];
  /** When the index listed every workflow of the family (null: never, within the wait). */
  listedAt: number | null;
  /** The job as created (null: never created). */
  created: BulkJobView | null;
  createError: string | null;
  /** What the kill found: the job's counts just before it (null: it did not find the job). */
  atKill: JobSample | null;
  samples: JobSample[];
  probes: FrontDoorProbe[];
  /** The job's last reading. */
  final: BulkJobView | null;
}

export interface BulkPhase {
  done: Promise<BulkRun>;
  /** Resolves once every start of the family was answered (or the deadline passed): the burst starts after it. */
  familyStarted: Promise<void>;
  /** The restarter's hook: creates the job and lets it act on a few, then says what the kill will find. */
  beforeKill: () => Promise<string | null>;
  /** The regular workload is over: a job not yet created is created now. */
  windDown: () => void;
}

const IDLE: BulkPhase = {
  done: Promise.resolve({ results: [], listedAt: null, created: null, createError: null, atKill: null, samples: [], probes: [], final: null }),
  familyStarted: Promise.resolve(),
  beforeKill: async () => null,
  windDown: () => {},
};

export function driveBulk({ client, workflows, restart, deadline }: { client: ShepherdClient; workflows: SoakWorkflow[]; restart: boolean; deadline: number }): BulkPhase {
  if (workflows.length === 0) return IDLE;
  const run: BulkRun = { results: workflows.map((wf) => newResult(wf.id, wf.kind)), listedAt: null, created: null, createError: null, atKill: null, samples: [], probes: [], final: null };
  const familyStarted = startAll(client, workflows, run.results, deadline);
  const ready = familyStarted.then(() => waitListed(client, workflows.length, deadline));
  let release: () => void = () => {};
  const released = new Promise<void>((resolve) => (release = resolve));
  if (!restart) release();
  let creating: Promise<BulkJobView | null> | undefined;
  const create = (): Promise<BulkJobView | null> => (creating ??= createJob(client, run, deadline));
  const done = (async () => {
    run.listedAt = await ready;
    await released;
    const job = await create();
    if (job) run.final = await follow(client, job.id, run, deadline);
    return run;
  })();
  return {
    done,
    familyStarted,
    async beforeKill() {
      release();
      const listedAt = await within(ready, READY_WAIT_MS, null);
      if (listedAt === null) return `bulk job not yet created: its ${workflows.length} workflows were not all started and listed`;
      const job = await create();
      if (!job) return `bulk job not created (${run.createError ?? "?"})`;
      run.atKill = await firstActions(client, job.id, Math.min(ACTED_BEFORE_KILL, Math.ceil(workflows.length / 10)));
      const counts = run.atKill.job;
      return `bulk job ${job.id} cancelling ${workflows.length} workflows, ${counts ? `${counts.done} done, ${counts.failed} failed of ${counts.matched} matched` : "unread"}`;
    },
    windDown: release,
  };
}

async function startAll(client: ShepherdClient, workflows: readonly SoakWorkflow[], results: WorkflowResult[], deadline: number): Promise<void> {
  await mapPool(workflows, START_CONCURRENCY, async (wf: SoakWorkflow, i: number) => {
    const result = results[i]!;
    result.started = await startUntilAccepted(client, wf.payload, result, { deadline });
  });
}

/** When the index lists `count` running workflows of the family (null: not by the deadline). */
async function waitListed(client: ShepherdClient, count: number, deadline: number): Promise<number | null> {
  while (Date.now() < deadline) {
    if ((await listedRunning(client)) >= count) return Date.now();
    await sleep(LISTED_POLL_MS);
  }
  return null;
}

async function listedRunning(client: ShepherdClient): Promise<number> {
  let listed = 0;
  let cursor: string | null = null;
  do {
    const page = await client.listWorkflows(cursor, { name: BULK_NAME });
    if (!page.value) return -1;
    listed += page.value.workflows.filter((w) => w.status === "running").length;
    cursor = page.value.nextCursor ?? null;
  } while (cursor);
  return listed;
}

async function createJob(client: ShepherdClient, run: BulkRun, deadline: number): Promise<BulkJobView | null> {
  for (let tries = 1; tries <= CREATE_TRIES && Date.now() < deadline; tries++) {
    const answer = await client.startBulkJob(bulkCancelRequest);
    if (answer.value) return (run.created = answer.value);
    run.createError = `POST /v1/bulk answered ${answer.status}${answer.error ? ` (${answer.error})` : ""}: ${JSON.stringify(answer.body)?.slice(0, 200)}`;
    if (answer.status >= 400 && answer.status < 500 && answer.status !== 429) return null;
    await sleep(1_000);
  }
  return null;
}

/** Reads the job until it has acted on `acted` workflows (bounded): the reading the kill comes after. */
async function firstActions(client: ShepherdClient, jobId: string, acted: number): Promise<JobSample> {
  const until = Date.now() + FIRST_ACTIONS_WAIT_MS;
  for (;;) {
    const { sample } = await readJob(client, jobId);
    const counts = sample.job;
    if (Date.now() >= until || (counts && (counts.done + counts.failed >= acted || counts.status === "done"))) return sample;
    await sleep(200);
  }
}

async function readJob(client: ShepherdClient, jobId: string): Promise<{ sample: JobSample; view: BulkJobView | null }> {
  const answer = await client.getBulkJob(jobId);
  const view = answer.value;
  return { sample: { at: Date.now(), httpStatus: answer.status, job: view && { status: view.status, matched: view.matched, done: view.done, failed: view.failed } }, view };
}

/** Samples the job and probes the front door until the job is done (or the deadline); resolves to its last reading. */
async function follow(client: ShepherdClient, jobId: string, run: BulkRun, deadline: number): Promise<BulkJobView | null> {
  let last: BulkJobView | null = null;
  let finish: () => void = () => {};
  const finished = new Promise<void>((resolve) => (finish = resolve));
  const jobs = sampleEvery(JOB_SAMPLE_MS, async () => {
    const { sample, view } = await readJob(client, jobId);
    run.samples.push(sample);
    if (view) last = view;
    if (view?.status === "done") finish();
  });
  const probes = sampleEvery(PROBE_MS, async () => {
    const at = Date.now();
    const answer = await client.listWorkflows(null, { name: BULK_NAME, limit: 1 });
    run.probes.push({ at, ms: Date.now() - at, status: answer.status, error: answer.error });
  });
  await within(finished, Math.max(0, deadline - Date.now()), null);
  await Promise.all([jobs.stop(), probes.stop()]);
  return last;
}
