// Where a step's CPU goes, read from a V8 CPU profile (the .cpuprofile that Profiler.stop returns): the time
// the profile covers, the functions with the most self time, and self time grouped into categories (zod
// parsing, JSON, structuredClone, SQL, crypto, Hono, the state machine, garbage collection, …), each also per
// executed step when the caller knows how many steps the profiled load ran. Pure: a profile object in,
// figures and Markdown out (bench/summarize-profile.ts is the command line).
//
// A sample's self time goes to the category of its stack (profile-categories.ts).
//
// How workerd is sampled: V8 samples an isolate only while a thread has entered it. workerd runs every
// isolate of the process (the Worker and the local emulations) and its own I/O on one thread, so between a
// Worker's events there are simply no samples. Each sample therefore counts one sampling interval, and the
// profile's span less its samples is time the isolate was not entered. Inside it, "(program)" is native work
// with no JavaScript on the stack (e.g. an RPC's arguments deserialised) and "(idle)" is waiting.

import type { CallFrame, CpuProfile } from "./cpu-profile.ts";
import { categoryOf } from "./profile-categories.ts";

/** The median of the gaps between samples: the interval the profiler kept while it could sample. */
function typicalInterval(timeDeltas: readonly number[]): number {
  const sorted = timeDeltas.slice(1).filter((delta) => delta > 0).sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

/**
 * { self, intervalUs }: self time of every node in µs, each sample counting one interval: `intervalUs` when
 * given, else the median gap between samples (see the top of this file for why a longer gap belongs to no
 * function). A profile without samples (hit counts only) spreads its span evenly over the hits.
 */
export function selfTimes(profile: CpuProfile, { intervalUs: given }: { intervalUs?: number } = {}): { self: Map<number, number>; intervalUs: number } {
  const self = new Map(profile.nodes.map((node) => [node.id, 0]));
  const { samples, timeDeltas } = profile;
  if (samples?.length) {
    const measured = timeDeltas?.length === samples.length ? typicalInterval(timeDeltas) : (profile.endTime - profile.startTime) / samples.length;
    const intervalUs = given ?? measured;
    for (const id of samples) self.set(id, (self.get(id) ?? 0) + intervalUs);
    return { self, intervalUs };
  }
  const hits = profile.nodes.reduce((sum, node) => sum + (node.hitCount ?? 0), 0);
  const intervalUs = hits > 0 ? (profile.endTime - profile.startTime) / hits : 0;
  for (const node of profile.nodes) self.set(node.id, (node.hitCount ?? 0) * intervalUs);
  return { self, intervalUs };
}

/** Each node's stack, leaf first, as frames; built once from the children lists. */
function stacks(profile: CpuProfile): (id: number) => CallFrame[] {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const cache = new Map<number, CallFrame[]>();
  return (id) => {
    const cached = cache.get(id);
    if (cached) return cached;
    const frames: CallFrame[] = [];
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const node = byId.get(at);
      if (node) frames.push(node.callFrame);
    }
    cache.set(id, frames);
    return frames;
  };
}

/** "name file:line" of a frame, the line 1-based as editors count. */
export function frameLabel(frame: CallFrame): string {
  const name = frame.functionName || "(anonymous)";
  return frame.url ? `${name} ${frame.url}:${frame.lineNumber + 1}` : name;
}

/**
 * Who asked for a mechanism's work: the two innermost frames of ours (src/) outside the leaf's own file,
 * inner first (so a wrapper every call goes through, such as the store's `query`, comes with its caller).
 */
function callerOfOurs(frames: readonly CallFrame[]): string | undefined {
  const ours = frames.slice(1).filter((frame) => frame.url.startsWith("src/") && frame.url !== frames[0]?.url).slice(0, 2);
  return ours.length === 0 ? undefined : ours.map(frameLabel).join(" ← ");
}

/** Time in µs, summed. */
interface Timed {
  us: number;
}

/** Adds `us` to the entry under `key`, made from `init` the first time. */
function add<E extends object>(map: Map<string, E & Timed>, key: string, init: E, us: number): E & Timed {
  const entry = map.get(key) ?? { ...init, us: 0 };
  map.set(key, entry);
  entry.us += us;
  return entry;
}

/** A function's place: its name, file and 1-based line (none for a native). */
interface FunctionPlace {
  name: string;
  url: string;
  line: number | undefined;
  /** Its category's key (the self-time list only). */
  category?: string;
}

/** Adds a sample's time to every distinct function of ours on its stack (a recursive one once). */
function addInclusive(inclusive: Map<string, FunctionPlace & Timed>, frames: readonly CallFrame[], us: number): void {
  const seen = new Set<string>();
  for (const frame of frames) {
    if (!frame.url.startsWith("src/")) continue;
    const label = frameLabel(frame);
    if (seen.has(label)) continue;
    seen.add(label);
    add(inclusive, label, { name: frame.functionName || "(anonymous)", url: frame.url, line: frame.lineNumber + 1 }, us);
  }
}

/** A category's self time while it is summed, with the code of ours under it. */
interface CategoryTotal extends Timed {
  key: string;
  label: string;
  mechanism: boolean;
  callers: Map<string, Timed>;
}

/** Self time by category, by function, and total time of our functions, summed over the profile's samples. */
interface Totals {
  intervalUs: number;
  sampledUs: number;
  categories: Map<string, CategoryTotal>;
  functions: Map<string, FunctionPlace & Timed>;
  inclusive: Map<string, FunctionPlace & Timed>;
}

function totals(profile: CpuProfile): Totals {
  const { self, intervalUs } = selfTimes(profile);
  const stackOf = stacks(profile);
  const result: Totals = { intervalUs, sampledUs: 0, categories: new Map(), functions: new Map(), inclusive: new Map() };
  for (const [id, us] of self) {
    const frames = stackOf(id);
    const frame = frames[0];
    if (us <= 0 || !frame) continue;
    result.sampledUs += us;
    const category = categoryOf(frames);
    const entry = add(result.categories, category.key, { key: category.key, label: category.label, mechanism: Boolean(category.mechanism), callers: new Map() }, us);
    if (category.mechanism) add(entry.callers, callerOfOurs(frames) ?? "(no code of ours on the stack)", {}, us);
    const place = { name: frame.functionName || "(anonymous)", url: frame.url, line: frame.url ? frame.lineNumber + 1 : undefined, category: category.key };
    add(result.functions, frameLabel(frame), place, us);
    addInclusive(result.inclusive, frames, us);
  }
  return result;
}

/** A time as ms, as a share of the busy time, and per step. */
export interface Figures {
  ms: number;
  pct: number;
  msPerStep: number | undefined;
}

export interface CategorySummary extends Figures {
  key: string;
  label: string;
  mechanism: boolean;
  /** Not (idle) nor (program): the isolate's own work. */
  busy: boolean;
  callers: Array<{ label: string; ms: number }>;
}

export type FunctionSummary = FunctionPlace & Figures;

export interface ProfileSummary {
  spanMs: number;
  intervalUs: number;
  sampledMs: number;
  busyMs: number;
  steps: number | undefined;
  categories: CategorySummary[];
  functions: FunctionSummary[];
  ours: FunctionSummary[];
}

const NOT_BUSY = ["idle", "program"];

/**
 * The profile in brief. sampledMs is the time the isolate was entered (its samples × the interval), busyMs
 * that less (idle) and (program): its own JavaScript, the natives it called and its GC. Percentages are of
 * busyMs, per-step figures divide by `steps`. `categories` (all that have time, largest first) carry
 * `callers`: the code of ours under a mechanism's time. `functions`: the `top` functions by self time, each
 * with its category. `ours`: the `top` functions of src/ by total time (their own and everything they called
 * synchronously).
 */
export function summarizeProfile(profile: CpuProfile, { steps, top = 25, callersPerCategory = 4 }: { steps?: number; top?: number; callersPerCategory?: number } = {}): ProfileSummary {
  const { intervalUs, sampledUs, categories, functions, inclusive } = totals(profile);
  const busyUs = sampledUs - NOT_BUSY.reduce((sum, key) => sum + (categories.get(key)?.us ?? 0), 0);
  const figures = (us: number): Figures => ({
    ms: us / 1000,
    pct: busyUs > 0 ? (us / busyUs) * 100 : 0,
    msPerStep: steps !== undefined && steps > 0 ? us / 1000 / steps : undefined,
  });
  const byTime = (a: Timed, b: Timed): number => b.us - a.us;
  const ranked = (map: Map<string, FunctionPlace & Timed>): FunctionSummary[] =>
    [...map.values()].sort(byTime).slice(0, top).map(({ us, ...fn }) => ({ ...fn, ...figures(us) }));
  return {
    spanMs: (profile.endTime - profile.startTime) / 1000,
    intervalUs,
    sampledMs: sampledUs / 1000,
    busyMs: busyUs / 1000,
    steps,
    categories: [...categories.values()].sort(byTime).map(({ us, callers, ...category }) => ({
      ...category,
      ...figures(us),
      busy: !NOT_BUSY.includes(category.key),
      callers: [...callers.entries()].sort((a, b) => b[1].us - a[1].us).slice(0, callersPerCategory).map(([label, { us: callerUs }]) => ({ label, ms: callerUs / 1000 })),
    })),
    functions: ranked(functions),
    ours: ranked(inclusive),
  };
}

const fixed = (value: number | undefined, digits: number): string => (value === undefined ? "—" : value.toFixed(digits));
const escape = (text: string): string => text.replaceAll("|", "\\|");

/** The summary as Markdown: the category table, the top functions by self time, ours by total time. */
export function renderProfileSummary(summary: ProfileSummary, { title = "CPU profile" }: { title?: string } = {}): string {
  const perStep = summary.steps !== undefined && summary.steps > 0;
  const lines = [
    `**${title}**: the isolate was entered ${fixed(summary.sampledMs, 0)} ms of the ${fixed(summary.spanMs, 0)} ms profiled ` +
      `(samples every ${fixed(summary.intervalUs / 1000, 2)} ms), ${fixed(summary.busyMs, 0)} ms of it running its JavaScript, the natives it called and GC` +
      (perStep ? `: ${fixed(summary.busyMs / (summary.steps ?? 1), 3)} ms per step over ${summary.steps} steps` : "") + ".",
    "",
    "| Category | ms | ms per step | % of JS + GC |",
    "| --- | ---: | ---: | ---: |",
  ];
  for (const category of summary.categories) {
    const callers = category.mechanism && category.callers.length > 0
      ? `; from ${category.callers.map((caller) => `${escape(caller.label)} (${fixed(caller.ms, 0)} ms)`).join(", ")}`
      : "";
    lines.push(`| ${escape(category.label)}${callers} | ${fixed(category.ms, 0)} | ${fixed(category.msPerStep, 3)} | ${category.busy ? fixed(category.pct, 1) : "—"} |`);
  }
  lines.push("", "| Function (self time) | Category | ms | ms per step | % of JS + GC |", "| --- | --- | ---: | ---: | ---: |");
  for (const fn of summary.functions) {
    const where = fn.url ? ` \`${fn.url}:${fn.line}\`` : "";
    const busy = !NOT_BUSY.includes(fn.category ?? "");
    lines.push(`| ${escape(fn.name)}${where} | ${fn.category} | ${fixed(fn.ms, 0)} | ${fixed(fn.msPerStep, 3)} | ${busy ? fixed(fn.pct, 1) : "—"} |`);
  }
  lines.push("", "| Function of ours (total time: its own and what it called) | ms | ms per step | % of JS + GC |", "| --- | ---: | ---: | ---: |");
  for (const fn of summary.ours) lines.push(`| ${escape(fn.name)} \`${fn.url}:${fn.line}\` | ${fixed(fn.ms, 0)} | ${fixed(fn.msPerStep, 3)} | ${fixed(fn.pct, 1)} |`);
  return lines.join("\n");
}
