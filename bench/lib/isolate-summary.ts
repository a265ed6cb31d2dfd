// How the runtime's one thread splits between its isolates: for each isolate profiled over the same span,
// its JavaScript and GC per executed step (samples with a JS stack: CPU), its (program) samples (native work
// with no JS on the stack, which in workerd also covers some waiting, so it is shown apart), and its
// heaviest functions; then what of the thread's CPU no isolate's JavaScript accounts for (the runtime's
// native work: sockets, HTTP, timers, RPC plumbing, SQLite commits, and the profilers' own signals).
import type { CpuProfile } from "./cpu-profile.ts";
import { frameLabel, selfTimes } from "./profile-summary.ts";

const NOT_JS = new Set(["(idle)", "(program)", "(root)"]);

/** One isolate's profile in brief: entered, its JS + GC, its (program), and its heaviest functions. */
export interface IsolateSummary {
  id: string;
  enteredMs: number;
  busyMs: number;
  programMs: number;
  top: Array<{ label: string; ms: number }>;
}

/**
 * The `top` functions are by self time. `intervalUs`: the sampling interval, which a sparsely sampled isolate
 * cannot tell by itself.
 */
export function summarizeIsolate(id: string, profile: CpuProfile, { top = 3, intervalUs }: { top?: number; intervalUs?: number } = {}): IsolateSummary {
  const { self } = selfTimes(profile, { intervalUs });
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const byFunction = new Map<string, number>();
  let enteredUs = 0;
  let busyUs = 0;
  let programUs = 0;
  for (const [nodeId, us] of self) {
    const frame = byId.get(nodeId)?.callFrame;
    if (us <= 0 || !frame || frame.functionName === "(idle)") continue;
    enteredUs += us;
    if (frame.functionName === "(program)") programUs += us;
    if (NOT_JS.has(frame.functionName)) continue;
    busyUs += us;
    const label = frameLabel(frame);
    byFunction.set(label, (byFunction.get(label) ?? 0) + us);
  }
  return {
    id,
    enteredMs: enteredUs / 1000,
    busyMs: busyUs / 1000,
    programMs: programUs / 1000,
    top: [...byFunction].sort((a, b) => b[1] - a[1]).slice(0, top).map(([label, us]) => ({ label, ms: us / 1000 })),
  };
}

/**
 * The isolates that were entered at all, largest first, as a Markdown table per step; with the runtime
 * thread's CPU (`runtimeMainThreadMs`), a last row for what no isolate accounts for.
 */
export function renderIsolates(isolates: readonly IsolateSummary[], { steps, runtimeMainThreadMs }: { steps: number; runtimeMainThreadMs?: number }): string {
  const per = (ms: number): string => (steps > 0 ? (ms / steps).toFixed(3) : ms.toFixed(0));
  const unit = steps > 0 ? "ms per step" : "ms";
  const used = isolates.filter((isolate) => isolate.enteredMs > 0).sort((a, b) => b.enteredMs - a.enteredMs);
  const lines = [
    `| Isolate of the runtime | entered, ${unit} | JS + GC | (program) | heaviest functions (ms) |`,
    "| --- | ---: | ---: | ---: | --- |",
    ...used.map((isolate) => {
      const top = isolate.top.map((fn) => `${fn.label.replaceAll("|", "\\|")} (${fn.ms.toFixed(0)})`).join(", ");
      return `| ${isolate.id} | ${per(isolate.enteredMs)} | ${per(isolate.busyMs)} | ${per(isolate.programMs)} | ${top} |`;
    }),
  ];
  if (runtimeMainThreadMs !== undefined) {
    const busy = used.reduce((sum, isolate) => sum + isolate.busyMs, 0);
    lines.push(
      `| all isolates | ${per(used.reduce((sum, isolate) => sum + isolate.enteredMs, 0))} | ${per(busy)} | | |`,
      `| the runtime's main thread (CPU) | ${per(runtimeMainThreadMs)} | | | |`,
      used.length > 1
        ? `| … less all isolates' JS + GC: native work outside JavaScript | ${per(Math.max(0, runtimeMainThreadMs - busy))} | | | |`
        : `| … less this isolate's JS + GC: the other isolates (local emulations) and native work | ${per(Math.max(0, runtimeMainThreadMs - busy))} | | | |`,
    );
  }
  return lines.join("\n");
}
