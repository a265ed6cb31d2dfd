// Where a step's CPU goes, read from a V8 CPU profile (the .cpuprofile that Profiler.stop returns): the time
// the profile covers, the functions with the most self time, and self time grouped into categories (zod
// parsing, JSON, structuredClone, SQL, crypto, Hono, the state machine, garbage collection, …), each also per
// executed step when the caller knows how many steps the profiled load ran. Pure: a profile object in,
// figures and Markdown out (bench/summarize-profile.ts is the command line).
//
// A sample's self time goes to the innermost frame of its stack that a category claims. Natives and runtime
// built-ins no category names (an unnamed native, `node-internal:` timers) are passed over, so their time
// lands on the caller that asked for them; a stack of nothing but those is "runtime built-ins".
//
// How workerd is sampled: V8 samples an isolate only while a thread has entered it. workerd runs every
// isolate of the process (the Worker and the local emulations) and its own I/O on one thread, so between a
// Worker's events there are simply no samples. Each sample therefore counts one sampling interval, and the
// profile's span less its samples is time the isolate was not entered. Inside it, "(program)" is native work
// with no JavaScript on the stack (e.g. an RPC's arguments deserialised) and "(idle)" is waiting.

const SRC = (folder) => (frame) => frame.url.startsWith(`src/${folder}`);
const NATIVE = (names) => (frame) => frame.url === "" && names.test(frame.functionName);
const any = (...tests) => (frame) => tests.some((test) => test(frame));
const RUNTIME_URL = /^(node-internal|cloudflare-internal|cloudflare|workerd|internal|node):/;

/**
 * The categories, first match wins for one frame. `mechanism`: a kind of work done wherever it is called
 * (the summary lists which code of ours called it), rather than a place in the code.
 */
export const CATEGORIES = [
  { key: "gc", label: "garbage collection", leaf: "(garbage collector)" },
  { key: "idle", label: "(idle): entered, waiting", leaf: "(idle)" },
  { key: "program", label: "(program): native work with no JS on the stack", leaf: "(program)" },
  { key: "root", label: "(root)", leaf: "(root)" },
  { key: "zod", label: "zod parsing", mechanism: true, test: (f) => /(^|\/)node_modules\/zod\//.test(f.url) },
  { key: "json", label: "JSON.parse / JSON.stringify", mechanism: true, test: NATIVE(/^(JSON\.)?(parse|stringify)$|^Json(Parse|Stringify)/) },
  { key: "clone", label: "structuredClone", mechanism: true, test: (f) => f.functionName === "structuredClone" },
  {
    key: "sql", label: "SQL: sql.exec, cursors, alarms, transactionSync; src/workflow/store.ts", mechanism: true,
    test: any(NATIVE(/^(exec|toArray|one|raw|columnNames|transactionSync|setAlarm|getAlarm|deleteAlarm)$/), (f) => /^src\/scheduler\/(store|schema|inbox-rows)\.ts$/.test(f.url)),
  },
  { key: "d1", label: "D1 index writes: src/workflow-index, the D1 API", mechanism: true, test: (f) => f.url.startsWith("src/workflow-index/") || (/d1/i.test(f.url) && RUNTIME_URL.test(f.url)) },
  {
    key: "crypto", label: "crypto: HMAC task tokens (crypto.subtle), hashes", mechanism: true,
    test: any(NATIVE(/^(sign|verify|importKey|exportKey|digest|getRandomValues|randomUUID)$/), (f) => /^src\/domain\/(task-token|sha256|base64url)\.ts$/.test(f.url)),
  },
  {
    // The client's call is where a stub method is invoked: its self time is the runtime's native work for the
    // call (arguments serialised; on the first call to a new object, the object and its storage created).
    key: "rpc", label: "RPC calls: the stub invocation (src/workflow/client.ts), getByName, queue sends", mechanism: true,
    test: any(NATIVE(/^(getByName|idFromName|get|send|sendBatch)$/), (f) => f.url === "src/workflow/client.ts", (f) => RUNTIME_URL.test(f.url) && /rpc|workers|queue/i.test(f.url)),
  },
  { key: "hono", label: "Hono routing, middleware, validators", test: (f) => /(^|\/)node_modules\/(hono|@hono)\//.test(f.url) },
  { key: "machine", label: "state machine: src/domain/machine", test: SRC("domain/machine/") },
  { key: "domain", label: "other domain code: src/domain", test: SRC("domain/") },
  { key: "scheduler", label: "scheduler object: src/scheduler (but the store)", test: SRC("scheduler/") },
  { key: "agents", label: "agents: src/agents", test: SRC("agents/") },
  { key: "api", label: "front door: src/api, src/starts", test: any(SRC("api/"), SRC("starts/")) },
  { key: "ours", label: "other code of ours: src/", test: SRC("") },
  { key: "libraries", label: "other libraries (node_modules)", test: (f) => /(^|\/)node_modules\//.test(f.url) && !/\/wrangler\//.test(f.url) },
];
/** For a stack no category claims, by its leaf. */
const FALLBACK = [
  { key: "runtime", label: "runtime built-ins and natives (workerd)", test: (f) => f.url === "" || RUNTIME_URL.test(f.url) },
  { key: "other", label: "other: wrangler's and miniflare's wrappers, unmapped code", test: () => true },
];

/** The median of the gaps between samples: the interval the profiler kept while it could sample. */
function typicalInterval(timeDeltas) {
  const sorted = timeDeltas.slice(1).filter((delta) => delta > 0).sort((a, b) => a - b);
  return sorted.length > 0 ? sorted[Math.floor(sorted.length / 2)] : 0;
}

/**
 * { self, intervalUs }: self time of every node in µs, each sample counting one interval: `intervalUs` when
 * given, else the median gap between samples (see the top of this file for why a longer gap belongs to no
 * function). A profile without samples (hit counts only) spreads its span evenly over the hits.
 */
export function selfTimes(profile, { intervalUs: given } = {}) {
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
function stacks(profile) {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const cache = new Map();
  const stackOf = (id) => {
    if (cache.has(id)) return cache.get(id);
    const frames = [];
    for (let at = id; at !== undefined; at = parent.get(at)) frames.push(byId.get(at).callFrame);
    cache.set(id, frames);
    return frames;
  };
  return { byId, stackOf };
}

const LEAF_ONLY = CATEGORIES.filter((category) => category.leaf);
const BY_FRAME = CATEGORIES.filter((category) => category.test);

/**
 * The category of a stack (leaf first): GC, (idle), (program) by the leaf alone; else the innermost frame a
 * category claims; else the leaf's fallback.
 */
export function categoryOf(frames) {
  const special = LEAF_ONLY.find((category) => category.leaf === frames[0].functionName);
  if (special) return special;
  for (const frame of frames) {
    const category = BY_FRAME.find((candidate) => candidate.test(frame));
    if (category) return category;
  }
  return FALLBACK.find((candidate) => candidate.test(frames[0]));
}

/** "name file:line" of a frame, the line 1-based as editors count. */
export function frameLabel(frame) {
  const name = frame.functionName || "(anonymous)";
  return frame.url ? `${name} ${frame.url}:${frame.lineNumber + 1}` : name;
}

/**
 * Who asked for a mechanism's work: the two innermost frames of ours (src/) outside the leaf's own file,
 * inner first (so a wrapper every call goes through, such as the store's `query`, comes with its caller).
 */
function callerOfOurs(frames) {
  const ours = frames.slice(1).filter((frame) => frame.url.startsWith("src/") && frame.url !== frames[0].url).slice(0, 2);
  return ours.length === 0 ? undefined : ours.map(frameLabel).join(" ← ");
}

const add = (map, key, init, us) => {
  const entry = map.get(key) ?? map.set(key, { ...init, us: 0 }).get(key);
  entry.us += us;
  return entry;
};

/** Adds a sample's time to every distinct function of ours on its stack (a recursive one once). */
function addInclusive(inclusive, frames, us) {
  const seen = new Set();
  for (const frame of frames) {
    if (!frame.url.startsWith("src/")) continue;
    const label = frameLabel(frame);
    if (seen.has(label)) continue;
    seen.add(label);
    add(inclusive, label, { name: frame.functionName || "(anonymous)", url: frame.url, line: frame.lineNumber + 1 }, us);
  }
}

/**
 * { spanMs, intervalUs, sampledMs, busyMs, steps, categories, functions, ours }. sampledMs is the time the
 * isolate was entered (its samples × the interval), busyMs that less (idle) and (program): its own
 * JavaScript, the natives it called and its GC. Percentages are of busyMs, per-step figures divide by
 * `steps`. `categories` (all that have time, largest first) carry `callers`: the code of ours under a
 * mechanism's time. `functions`: the `top` functions by self time, each with its category. `ours`: the
 * `top` functions of src/ by total time (their own and everything they called synchronously).
 */
export function summarizeProfile(profile, { steps, top = 25, callersPerCategory = 4 } = {}) {
  const { self, intervalUs } = selfTimes(profile);
  const { byId, stackOf } = stacks(profile);
  const categories = new Map();
  const functions = new Map();
  const inclusive = new Map();
  let sampledUs = 0;
  for (const [id, us] of self) {
    if (us <= 0) continue;
    sampledUs += us;
    const frames = stackOf(id);
    const category = categoryOf(frames);
    const entry = add(categories, category.key, { key: category.key, label: category.label, mechanism: Boolean(category.mechanism), callers: new Map() }, us);
    const caller = callerOfOurs(frames);
    if (category.mechanism) add(entry.callers, caller ?? "(no code of ours on the stack)", {}, us);
    const frame = byId.get(id).callFrame;
    add(functions, frameLabel(frame), { name: frame.functionName || "(anonymous)", url: frame.url, line: frame.url ? frame.lineNumber + 1 : undefined, category: category.key }, us);
    addInclusive(inclusive, frames, us);
  }
  const notBusy = ["idle", "program"].reduce((sum, key) => sum + (categories.get(key)?.us ?? 0), 0);
  const busyUs = sampledUs - notBusy;
  const figures = (us) => ({
    ms: us / 1000,
    pct: busyUs > 0 ? (us / busyUs) * 100 : 0,
    msPerStep: steps > 0 ? us / 1000 / steps : undefined,
  });
  const byTime = (a, b) => b.us - a.us;
  return {
    spanMs: (profile.endTime - profile.startTime) / 1000,
    intervalUs,
    sampledMs: sampledUs / 1000,
    busyMs: busyUs / 1000,
    steps,
    categories: [...categories.values()].sort(byTime).map(({ us, callers, ...category }) => ({
      ...category,
      ...figures(us),
      busy: !["idle", "program"].includes(category.key),
      callers: [...callers.entries()].sort((a, b) => b[1].us - a[1].us).slice(0, callersPerCategory).map(([label, { us: callerUs }]) => ({ label, ms: callerUs / 1000 })),
    })),
    functions: [...functions.values()].sort(byTime).slice(0, top).map(({ us, ...fn }) => ({ ...fn, ...figures(us) })),
    ours: [...inclusive.values()].sort(byTime).slice(0, top).map(({ us, ...fn }) => ({ ...fn, ...figures(us) })),
  };
}

const fixed = (value, digits) => (value === undefined ? "—" : value.toFixed(digits));
const escape = (text) => text.replaceAll("|", "\\|");

/** The summary as Markdown: the category table, the top functions by self time, ours by total time. */
export function renderProfileSummary(summary, { title = "CPU profile" } = {}) {
  const perStep = summary.steps > 0;
  const lines = [
    `**${title}**: the isolate was entered ${fixed(summary.sampledMs, 0)} ms of the ${fixed(summary.spanMs, 0)} ms profiled ` +
      `(samples every ${fixed(summary.intervalUs / 1000, 2)} ms), ${fixed(summary.busyMs, 0)} ms of it running its JavaScript, the natives it called and GC` +
      (perStep ? `: ${fixed(summary.busyMs / summary.steps, 3)} ms per step over ${summary.steps} steps` : "") + ".",
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
    const busy = !["idle", "program"].includes(fn.category);
    lines.push(`| ${escape(fn.name)}${where} | ${fn.category} | ${fixed(fn.ms, 0)} | ${fixed(fn.msPerStep, 3)} | ${busy ? fixed(fn.pct, 1) : "—"} |`);
  }
  lines.push("", "| Function of ours (total time: its own and what it called) | ms | ms per step | % of JS + GC |", "| --- | ---: | ---: | ---: |");
  for (const fn of summary.ours) lines.push(`| ${escape(fn.name)} \`${fn.url}:${fn.line}\` | ${fixed(fn.ms, 0)} | ${fixed(fn.msPerStep, 3)} | ${fixed(fn.pct, 1)} |`);
  return lines.join("\n");
}
