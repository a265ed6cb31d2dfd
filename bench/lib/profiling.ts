// `--profile FILE`: V8 CPU profiles over the load of each throughput measurement. Shepherd's isolate is
// profiled through the inspector `wrangler dev` opens (the runtime lets one session per isolate in, and
// wrangler's proxy holds that one); with --profile-isolates also every other isolate of the runtime (the
// local queue brokers, D1, the entry router, outbound fetch, …) through the runtime's own inspector, so the
// summary can say how the runtime's CPU splits between Shepherd, the emulations and native work.
// Saved: FILE (Shepherd's isolate, frames mapped to src/, for DevTools' Performance panel), FILE's .md (the
// summary per executed step) and, with --profile-isolates, FILE's .isolates.json (the other profiles).
import { writeFileSync } from "node:fs";
import { basename, dirname, extname, join, relative } from "node:path";
import { writeJson } from "../../scripts/lib/output-files.ts";
import { cpuProfiler, inspectorTargets } from "./inspector.ts";
import { mapProfileToSources } from "./profile-sources.ts";
import { renderIsolates, summarizeIsolate } from "./isolate-summary.ts";
import { renderProfileSummary, summarizeProfile } from "./profile-summary.ts";
import { cpuSpan, runtimeInspector } from "./workerd-processes.ts";

/**
 * 1 ms, V8's usual interval: a W = 1 000 run gets tens of thousands of samples of Shepherd's isolate. With
 * --profile-isolates every other isolate gets a sampler of its own at the same interval (their sampler
 * threads then take about a fifth of a core: that run is for the split between isolates, not for figures).
 */
export const SAMPLING_INTERVAL_US = 1000;

/** FILE for the only profiled measurement; FILE with `-<case>-<repeat>` before its extension when there are several. */
export function profilePath(base, { caseName, rep, several }) {
  if (!several) return base;
  const extension = extname(base) || ".cpuprofile";
  return join(dirname(base), `${basename(base, extname(base))}-${caseName}-${rep}${extension}`);
}

/** Shepherd's isolate through wrangler's proxy; with `isolates`, every other isolate of the runtime by its id. */
async function profilersFor(engine, { isolates }) {
  const [ours] = (await inspectorTargets(engine.inspectorPort)) ?? [];
  if (!ours) throw new Error(`no inspector target at port ${engine.inspectorPort}`);
  const profiler = (target) => ({ id: target.id, profiler: cpuProfiler(target.webSocketDebuggerUrl, { samplingIntervalUs: SAMPLING_INTERVAL_US }) });
  const profilers = [{ ...profiler(ours), id: `core:user:${engine.workerName}`, ours: true }];
  if (!isolates) return profilers;
  const runtime = await runtimeInspector(engine.workerdPids());
  return [...profilers, ...runtime.targets.filter((target) => target.id !== `core:user:${engine.workerName}`).map(profiler)];
}

/**
 * The probe the throughput case calls: connect() before the measurement, start()/stop() around its load.
 * Afterwards `profiles` holds { id, ours, profile } per isolate and `processes` the workerd CPU of the span.
 * A profiler that fails records why (`error`) instead of failing the measurement.
 */
export function loadProfiler(engine, { isolates = false } = {}) {
  let profilers = [];
  let countCpu;
  let startedAt;
  const probe = { profiles: [], processes: undefined, wallMs: undefined, error: undefined };
  const everyProfiler = (fn) => Promise.all(profilers.map(fn));
  probe.connect = async () => {
    profilers = await profilersFor(engine, { isolates });
    await everyProfiler(({ profiler }) => profiler.connect());
  };
  probe.start = async () => {
    try {
      await everyProfiler(({ profiler }) => profiler.start());
      countCpu = cpuSpan(engine.workerdPids());
      startedAt = Date.now();
    } catch (error) {
      probe.error = `Profiler.start: ${error.message}`;
    }
  };
  probe.stop = async () => {
    if (probe.error) return probe.abandon();
    probe.processes = countCpu();
    probe.wallMs = Date.now() - startedAt;
    // One at a time: each stop serialises a profile on the runtime's one thread.
    for (const { id, ours, profiler } of profilers) {
      try {
        probe.profiles.push({ id, ours: Boolean(ours), profile: await profiler.stop() });
      } catch (error) {
        if (ours) probe.error = `Profiler.stop: ${error.message}`;
        profiler.abandon();
      }
    }
  };
  probe.abandon = () => profilers.forEach(({ profiler }) => profiler.abandon());
  return probe;
}

/** The span's workerd CPU as Markdown lines, per process (and thread) and per step. */
function processLines({ processes, wallMs }, steps) {
  const perStep = (ms) => (steps > 0 ? `, ${(ms / steps).toFixed(3)} ms per step` : "");
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
export function saveProfile(probe, { file, appDir, steps, repo, title }) {
  const ours = probe.profiles.find((entry) => entry.ours)?.profile;
  if (!ours) return { figures: { error: probe.error ?? "no profile" }, markdown: "" };
  const mapping = mapProfileToSources(ours, { appDir });
  writeJson(file, ours);
  const others = probe.profiles.filter((entry) => !entry.ours);
  if (others.length > 0) writeJson(file.replace(/(\.cpuprofile)?$/, ".isolates.json"), Object.fromEntries(others.map((entry) => [entry.id, entry.profile])));
  const summary = summarizeProfile(ours, { steps });
  // Every isolate was sampled at the same interval: the one measured on Shepherd's, the busiest, holds for all.
  const isolates = probe.profiles.map((entry) => summarizeIsolate(entry.id, entry.profile, { intervalUs: summary.intervalUs }));
  const runtime = probe.processes.find((proc) => proc.role.startsWith("runtime"));
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
