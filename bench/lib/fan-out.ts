// The fan-out case: one workflow over N items (0 … N-1), each item a POST to the remote's /ok, which answers
// at once. Shepherd runs it as one `map` step; the baseline as one instance doing `Promise.all` of a
// `step.do` per item. How long the one workflow takes, at what CPU per item and peak memory, and whether it
// completes at all: a run that does not end within its bound, or ends any other way, is a figure ("completed:
// no" and how it ended), not a failure of the bench.
import { sleep } from "../../scripts/lib/async.ts";
import type { FakeRemote } from "../../scripts/lib/fake-remote.ts";
import { errorMessage } from "../../scripts/lib/json.ts";
import type { Engine, FanOutApi, FanOutSpec, StartResult, WorkflowStatus } from "./engines/engine.ts";
import { cpuMs, memoryKb, sampleRss } from "./proc-readings.ts";
import { now } from "./remote.ts";
import { DEFAULT_RETRY, DEFAULT_TIMEOUTS, idFor } from "./workload.ts";
import type { BenchContext } from "./workload.ts";

/** Nothing of the run reached the remote for this long: the engine has stopped working on it. */
export const STALL_MS = 60_000;
/** How often the one workflow is read once every item reached the remote. */
const READ_INTERVAL_MS = 100;
/** Reads of the ended workflow whose CPU is measured, to take the reads made while waiting out of the figure. */
const READS_MEASURED = 10;

export interface FanOutRun {
  tag: string;
  items: number;
  /** Shepherd's map `maxConcurrency`; the baseline's Promise.all has no such bound. */
  maxConcurrency: number;
  /** Bounds the whole run, from the start request. */
  timeoutMs: number;
}

export type FanOutFigures = {
  items: number;
  maxConcurrency: number;
  /** 1: the workflow completed; 0: it ended any other way, or not within the bound. */
  completed: number;
  /** The engine's final status; `start_<status>` for a refused start, `not ended` past the bound. */
  endedAs: string;
  error: string | undefined;
  /** Distinct items whose request reached the remote, and the requests in all (retries included). */
  itemsAtRemote: number;
  itemRequests: number;
  /** Start request → the engine's completion stamp; undefined unless completed. */
  wallS: number | undefined;
  itemsPerSec: number | undefined;
  /** The start request's answer (one request carrying every item), or until the harness stopped waiting for one. */
  startS: number;
  /** From the start request until the harness stopped waiting for a run that did not complete. */
  gaveUpAfterS: number | undefined;
  /** Over the items of a completed run; cpuS is the whole run's, completed or not. */
  cpuMsPerItem: number | undefined;
  cpuS: number | undefined;
  peakRssMb: number;
  rssGrowthMb: number;
  workerdRestarted: number;
};

/** A run's items as the remote sees them: the keys `<id>:each:<index>`. */
export interface ItemProgress {
  keys: Set<string>;
  requests: number;
  lastProgressAt: number;
  stop(): void;
}

/** Follows the requests whose Idempotency-Key starts with `prefix` (the workflow's id and a colon) until stop(). */
export function watchItems(remote: Pick<FakeRemote, "events">, prefix: string): ItemProgress {
  const onRequest = (key: string): void => {
    if (!key.startsWith(prefix)) return;
    progress.keys.add(key);
    progress.requests++;
    progress.lastProgressAt = Date.now();
  };
  const progress: ItemProgress = { keys: new Set(), requests: 0, lastProgressAt: Date.now(), stop: () => remote.events.off("request", onRequest) };
  remote.events.on("request", onRequest);
  return progress;
}

/** What the run measured, for fanOutFigures. */
export interface FanOutMeasured {
  start: StartResult;
  startS: number;
  /** The last status read; undefined when none answered. */
  status: WorkflowStatus | undefined;
  startedAt: number;
  stoppedAt: number;
  itemsAtRemote: number;
  itemRequests: number;
  /** workerd CPU over the run, the reads made while waiting already taken out; undefined when workerd restarted. */
  cpuMs: number | undefined;
  peakRssKb: number;
  rssBeforeKb: number;
  workerdRestarted: boolean;
}

/** One repeat at N items (see FanOutFigures). */
export async function fanOut(ctx: BenchContext, engine: Engine, run: FanOutRun): Promise<FanOutFigures> {
  const api = engine.fanOut;
  if (!api) throw new Error(`${engine.label} has no fan-out case`);
  const id = idFor(ctx, run.tag, 0);
  const progress = watchItems(ctx.remote, `${id}:`);
  const pids = engine.workerdPids();
  const cpuBefore = cpuMs(pids);
  const rssBeforeKb = memoryKb(pids).rssKb;
  const stopRss = sampleRss(() => pids);
  const startedAt = now();
  const deadline = Date.now() + run.timeoutMs;
  try {
    const start = await startFanOut(api, { id, items: run.items, url: `${ctx.remote.url}/ok`, maxConcurrency: run.maxConcurrency, retry: DEFAULT_RETRY, timeouts: DEFAULT_TIMEOUTS });
    const startS = (now() - startedAt) / 1000;
    const ended = start.ok ? await waitForEnd(api, id, progress, { items: run.items, deadline }) : { status: undefined, reads: 0 };
    const stoppedAt = now();
    const peakRssKb = stopRss();
    const cpuRun = cpuMs(pids) - cpuBefore;
    const workerdRestarted = engine.workerdPids().join(",") !== pids.join(",");
    // An engine that did not end the workflow may not answer reads either: ten more, each waiting out its
    // timeout, would only hold up the run for a figure (cpuS) that matters least there.
    const cpuPerRead = ended.reads > 0 && ended.status?.terminal ? await readCpuMs(api, pids, id) : 0;
    if (start.ok && !ended.status?.terminal) await api.cancel(id).catch(() => undefined);
    const cpu = workerdRestarted ? undefined : Math.max(0, cpuRun - cpuPerRead * ended.reads);
    const measured = { start, startS, status: ended.status, startedAt, stoppedAt, itemsAtRemote: progress.keys.size, itemRequests: progress.requests, cpuMs: cpu, peakRssKb, rssBeforeKb, workerdRestarted };
    return fanOutFigures(run, measured);
  } finally {
    stopRss();
    progress.stop();
  }
}

/**
 * The start. A request that got no answer (a timeout, a reset) may still have started the workflow: when the
 * engine has it, the run goes on as started; otherwise it is a refused start rather than a crash.
 */
async function startFanOut(api: FanOutApi, spec: FanOutSpec): Promise<StartResult> {
  const result = await api.start(spec).catch((error: unknown): StartResult => ({ ok: false, status: "no answer", error: errorMessage(error) }));
  if (result.status !== "no answer") return result;
  const known = await api.readStatus(spec.id).catch(() => undefined);
  return known !== undefined && !known.state.startsWith("http_") ? { ...result, ok: true } : result;
}

/**
 * Waits without reading the engine until every item reached the remote (or none did for STALL_MS since the
 * start was answered or the last item arrived), then reads the workflow until it has ended: until the
 * deadline, or STALL_MS more when the items stalled.
 */
async function waitForEnd(api: FanOutApi, id: string, progress: ItemProgress, { items, deadline }: { items: number; deadline: number }): Promise<{ status: WorkflowStatus | undefined; reads: number }> {
  // An engine may take its time answering the start (the baseline sets out every step.do first): the silence
  // that counts begins with the answer.
  const answeredAt = Date.now();
  const stalled = (): boolean => Date.now() - Math.max(answeredAt, progress.lastProgressAt) >= STALL_MS;
  while (progress.keys.size < items && Date.now() < deadline && !stalled()) await sleep(50);
  const readUntil = stalled() ? Math.min(deadline, Date.now() + STALL_MS) : deadline;
  let status: WorkflowStatus | undefined;
  let reads = 0;
  for (;;) {
    reads++;
    // A read the engine did not answer says nothing about the workflow: the last answer stands.
    status = (await api.readStatus(id).catch(() => undefined)) ?? status;
    if ((status?.terminal && !status.state.startsWith("http_")) || Date.now() >= readUntil) return { status, reads };
    await sleep(READ_INTERVAL_MS);
  }
}

/** The CPU of one status read of the ended workflow. */
async function readCpuMs(api: FanOutApi, pids: readonly number[], id: string): Promise<number> {
  const before = cpuMs(pids);
  for (let read = 0; read < READS_MEASURED; read++) await api.readStatus(id).catch(() => undefined);
  return (cpuMs(pids) - before) / READS_MEASURED;
}

/** The figures of one repeat from what it measured. */
export function fanOutFigures({ items, maxConcurrency }: FanOutRun, measured: FanOutMeasured): FanOutFigures {
  const { start, status, startedAt, stoppedAt, itemsAtRemote, cpuMs: cpu } = measured;
  const completed = status?.completed === true;
  const endedAt = completed ? (status.endedAt ?? stoppedAt) : undefined;
  const wallMs = endedAt === undefined ? undefined : endedAt - startedAt;
  return {
    items,
    maxConcurrency,
    completed: completed ? 1 : 0,
    endedAs: endedAs(start, status),
    error: start.ok ? status?.error : start.error,
    itemsAtRemote,
    itemRequests: measured.itemRequests,
    wallS: wallMs === undefined ? undefined : wallMs / 1000,
    itemsPerSec: wallMs !== undefined && wallMs > 0 ? items / (wallMs / 1000) : undefined,
    startS: measured.startS,
    gaveUpAfterS: completed ? undefined : (stoppedAt - startedAt) / 1000,
    // A run that did not complete spent its CPU on more than the items that reached the remote (the baseline
    // sets out every step.do first): per item, that would say nothing.
    cpuMsPerItem: completed && cpu !== undefined && itemsAtRemote > 0 ? cpu / itemsAtRemote : undefined,
    cpuS: cpu === undefined ? undefined : cpu / 1000,
    peakRssMb: measured.peakRssKb / 1024,
    rssGrowthMb: (measured.peakRssKb - measured.rssBeforeKb) / 1024,
    workerdRestarted: measured.workerdRestarted ? 1 : 0,
  };
}

/** How the workflow ended, in a word: the engine's status, or why there is none. */
function endedAs(start: StartResult, status: WorkflowStatus | undefined): string {
  if (!start.ok) return `start_${String(start.status).replace(/ /g, "_")}`;
  if (status === undefined) return "no answer";
  return status.terminal ? status.state : "not ended";
}
