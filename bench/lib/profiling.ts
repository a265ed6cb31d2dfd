// `--profile FILE`: V8 CPU profiles over the load of each throughput measurement. Shepherd's isolate is
// profiled through the inspector `wrangler dev` opens (the runtime lets one session per isolate in, and
// wrangler's proxy holds that one); with --profile-isolates also every other isolate of the runtime (the
// local queue brokers, D1, the entry router, outbound fetch, …) through the runtime's own inspector, so the
// summary can say how the runtime's CPU splits between Shepherd, the emulations and native work.
// Saved: FILE (Shepherd's isolate, frames mapped to src/, for DevTools' Performance panel), FILE's .md (the
// summary per executed step) and, with --profile-isolates, FILE's .isolates.json (the other profiles).
import { writeFileSync } from "node:fs";
import { basename, dirname, extname, join, relative } from "node:path";
import { errorMessage } from "../../scripts/lib/json.ts";
import { writeJson } from "../../scripts/lib/output-files.ts";
import type { CpuProfile } from "./cpu-profile.ts";
import type { ProfiledEngine } from "./engines/engine.ts";
import { cpuProfiler, inspectorTargets } from "./inspector.ts";
import type { CpuProfiler, InspectorTarget } from "./inspector.ts";
import { mapProfileToSources } from "./profile-sources.ts";
import { renderIsolates, summarizeIsolate } from "./isolate-summary.ts";
import { renderProfileSummary, summarizeProfile } from "./profile-summary.ts";
import { cpuSpan, runtimeInspector } from "./workerd-processes.ts";
import type { ProcessCpu } from "./workerd-processes.ts";

/**
 * 1 ms, V8's usual interval: a W = 1 000 run gets tens of thousands of samples of Shepherd's isolate. With
 * --profile-isolates every other isolate gets a sampler of its own at the same interval (their sampler
 * threads then take about a fifth of a core: that run is for the split between isolates, not for figures).
 */
export const SAMPLING_INTERVAL_US = 1000;

/** FILE for the only profiled measurement; FILE with `-<case>-<repeat>` before its extension when there are several. */
/** Which measurement a profile is of. */
export interface ProfiledMeasurement {
  caseName: string;
  rep: number;
  /** More than one measurement is profiled in the run. */
  several: boolean;
}

export function profilePath(base: string, { caseName, rep, several }: ProfiledMeasurement): string {
  if (!several) return base;
  const extension = extname(base) || ".cpuprofile";
  return join(dirname(base), `${basename(base, extname(base))}-${caseName}-${rep}${extension}`);
}

/** A profiler on one isolate, by the isolate's id; `ours` for Shepherd's. */
interface IsolateProfiler {
  id: string;
  ours?: boolean;
  profiler: CpuProfiler;
}

/** Shepherd's isolate through wrangler's proxy; with `isolates`, every other isolate of the runtime by its id. */
async function profilersFor(engine: ProfiledEngine, { isolates }: { isolates: boolean }): Promise<IsolateProfiler[]> {
  const [ours] = (await inspectorTargets(engine.inspectorPort)) ?? [];
  if (!ours) throw new Error(`no inspector target at port ${engine.inspectorPort}`);
  const profiler = (target: InspectorTarget): IsolateProfiler => ({ id: target.id, profiler: cpuProfiler(target.webSocketDebuggerUrl, { samplingIntervalUs: SAMPLING_INTERVAL_US }) });
  const profilers: IsolateProfiler[] = [{ ...profiler(ours), id: `core:user:${engine.workerName}`, ours: true }];
  if (!isolates) return profilers;
  const runtime = await runtimeInspector(engine.workerdPids());
  return [...profilers, ...runtime.targets.filter((target) => target.id !== `core:user:${engine.workerName}`).map(profiler)];
}

/** What a measurement brackets its load with (--profile). */
export interface Probe {
  start(): Promise<void>;
  stop(): Promise<void>;
}

/** A probe and what it took. A profiler that fails records why (`error`) instead of failing the measurement. */
export interface LoadProbe extends Probe {
  /** One per isolate profiled, once stopped. */
  profiles: Array<{ id: string; ours: boolean; profile: CpuProfile }>;
  /** The workerd CPU of the span, once stopped. */
  processes: ProcessCpu[] | undefined;
  wallMs: number | undefined;
  error: string | undefined;
  /** Before the measurement: the sessions open and their profilers enabled. */
  connect(): Promise<void>;
  /** For a run that failed before stop(): every isolate left unprofiled. */
  abandon(): void;
}

/** The probe the throughput case calls: connect() before the measurement, start()/stop() around its load. */
export function loadProfiler(engine: ProfiledEngine, { isolates = false }: { isolates?: boolean } = {}): LoadProbe {
  let profilers: IsolateProfiler[] = [];
  let countCpu: (() => ProcessCpu[]) | undefined;
  let startedAt = Date.now();
  const everyProfiler = (fn: (entry: IsolateProfiler) => Promise<unknown>): Promise<unknown[]> => Promise.all(profilers.map(fn));
  const probe: LoadProbe = {
    profiles: [],
    processes: undefined,
    wallMs: undefined,
    error: undefined,
    async connect() {
      profilers = await profilersFor(engine, { isolates });
      await everyProfiler(({ profiler }) => profiler.connect());
    },
    async start() {
      try {
        await everyProfiler(({ profiler }) => profiler.start());
        countCpu = cpuSpan(engine.workerdPids());
        startedAt = Date.now();
      } catch (error) {
        probe.error = `Profiler.start: ${errorMessage(error)}`;
      }
    },
    async stop() {
      if (probe.error) return probe.abandon();
      probe.processes = countCpu?.();
      probe.wallMs = Date.now() - startedAt;
      await collectProfiles(profilers, probe);
    },
    abandon: () => profilers.forEach(({ profiler }) => profiler.abandon()),
  };
  return probe;
}

/** Stops every profiler into the probe's profiles; one that fails is abandoned, and noted when it is ours. */
async function collectProfiles(profilers: readonly IsolateProfiler[], probe: LoadProbe): Promise<void> {
  // One at a time: each stop serialises a profile on the runtime's one thread.
  for (const { id, ours, profiler } of profilers) {
    try {
      probe.profiles.push({ id, ours: Boolean(ours), profile: await profiler.stop() });
    } catch (error) {
      if (ours) probe.error = `Profiler.stop: ${errorMessage(error)}`;
      profiler.abandon();
    }
  }
}

/** The span's workerd CPU as Markdown lines, per process (and thread) and per step. */
function processLines({ processes = [], wallMs = 0 }: LoadProbe, steps: number): string[] {
  const perStep = (ms: number): string => (steps > 0 ? `, ${(ms / steps).toFixed(3)} ms per step` : "");
  const total = processes.reduce((sum, proc) => sum + proc.cpuMs, 0);
  return [
    `Profiled span: ${(wallMs / 1000).toFixed(1)} s; workerd CPU in it ${total.toFixed(0)} ms${perStep(total)}:`,
    ...processes.map((proc) => {
      const threads = proc.threads.map((thread) => `${thread.name} ${thread.cpuMs.toFixed(0)} ms`).join(", ");
      return `- pid ${proc.pid}, ${proc.role}: ${proc.cpuMs.toFixed(0)} ms${perStep(proc.cpuMs)} (threads: ${threads || "none"})`;
    }),
  ];
}

/**
 * Saves a finished probe's profiles (Shepherd's frames mapped to the app's sources; the others beside it as
 * FILE's .isolates.json) and the summary for `steps` steps. Returns { figures, markdown }: figures for the
 * results JSON ({ error } for a probe that got no profile of Shepherd's isolate), the summary to print.
 */
/** What the results JSON keeps of a profiled measurement. */
export type ProfileFigures =
  | { error: string }
  | {
      file: string;
      summaryFile: string;
      steps: number;
      sampledMs: number;
      busyMsPerStep: number | undefined;
      msPerStep: Record<string, number | undefined>;
      isolates: Array<{ id: string; enteredMs: number; busyMs: number }>;
      processes: ProcessCpu[] | undefined;
      wallMs: number | undefined;
    };

export interface ProfileOutput {
  /** The .cpuprofile to write; the summary goes beside it. */
  file: string;
  appDir: string;
  /** Steps executed in the profiled load. */
  steps: number;
  repo: string;
  title: string;
}

export function saveProfile(probe: LoadProbe, { file, appDir, steps, repo, title }: ProfileOutput): { figures: ProfileFigures; markdown: string } {
  const ours = probe.profiles.find((entry) => entry.ours)?.profile;
  if (!ours) return { figures: { error: probe.error ?? "no profile" }, markdown: "" };
  const mapping = mapProfileToSources(ours, { appDir });
  writeJson(file, ours);
  const others = probe.profiles.filter((entry) => !entry.ours);
  if (others.length > 0) writeJson(file.replace(/(\.cpuprofile)?$/, ".isolates.json"), Object.fromEntries(others.map((entry) => [entry.id, entry.profile])));
  const summary = summarizeProfile(ours, { steps });
  // Every isolate was sampled at the same interval: the one measured on Shepherd's, the busiest, holds for all.
  const isolates = probe.profiles.map((entry) => summarizeIsolate(entry.id, entry.profile, { intervalUs: summary.intervalUs }));
  const runtime = probe.processes?.find((proc) => proc.role.startsWith("runtime"));
  const shown = relative(repo, file);
  const markdown = [
    renderProfileSummary(summary, { title }),
    "",
    renderIsolates(isolates, { steps, runtimeMainThreadMs: runtime?.threads.find((thread) => thread.name === "workerd")?.cpuMs }),
    "",
    ...processLines(probe, steps),
    "",
    `Frames mapped to their sources: ${mapping.mapped} (${mapping.unmapped} in the bundle without a mapping). ` +
      `Again: \`node bench/summarize-profile.ts ${shown} --steps ${steps}\``,
  ].join("\n");
  const summaryFile = file.replace(/(\.cpuprofile)?$/, ".md");
  writeFileSync(summaryFile, `${markdown}\n`);
  const figures = {
    file: shown,
    summaryFile: relative(repo, summaryFile),
    steps,
    sampledMs: summary.sampledMs,
    busyMsPerStep: steps > 0 ? summary.busyMs / steps : undefined,
    msPerStep: Object.fromEntries(summary.categories.map((category) => [category.key, category.msPerStep])),
    isolates: isolates.map(({ id, enteredMs, busyMs }) => ({ id, enteredMs, busyMs })),
    processes: probe.processes,
    wallMs: probe.wallMs,
  };
  return { figures, markdown };
}
