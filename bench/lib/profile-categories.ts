// The categories a profile's self time is grouped into (zod parsing, JSON, structuredClone, SQL, crypto,
// Hono, the state machine, garbage collection, …) and which one a sample's stack belongs to.
//
// A sample's self time goes to the innermost frame of its stack that a category claims. Natives and runtime
// built-ins no category names (an unnamed native, `node-internal:` timers) are passed over, so their time
// lands on the caller that asked for them; a stack of nothing but those is "runtime built-ins".
import type { CallFrame } from "./cpu-profile.ts";

type FrameTest = (frame: CallFrame) => boolean;

const SRC = (folder: string): FrameTest => (frame) => frame.url.startsWith(`src/${folder}`);
const NATIVE = (names: RegExp): FrameTest => (frame) => frame.url === "" && names.test(frame.functionName);
const any = (...tests: FrameTest[]): FrameTest => (frame) => tests.some((test) => test(frame));
const RUNTIME_URL = /^(node-internal|cloudflare-internal|cloudflare|workerd|internal|node):/;

/** Where self time goes: a category claims a stack by its leaf's name or by a test of each frame. */
export interface Category {
  key: string;
  label: string;
  /** Claims a stack whose leaf is this function (GC, (idle), (program), (root)). */
  leaf?: string;
  /** Claims the innermost frame it holds for. */
  test?: FrameTest;
  /** A kind of work done wherever it is called (the summary lists which code of ours called it), rather than a place in the code. */
  mechanism?: boolean;
}

/** The categories, first match wins for one frame. */
export const CATEGORIES: Category[] = [
  { key: "gc", label: "garbage collection", leaf: "(garbage collector)" },
  { key: "idle", label: "(idle): entered, waiting", leaf: "(idle)" },
  { key: "program", label: "(program): native work with no JS on the stack", leaf: "(program)" },
  { key: "root", label: "(root)", leaf: "(root)" },
  { key: "zod", label: "zod parsing", mechanism: true, test: (f) => /(^|\/)node_modules\/zod\//.test(f.url) },
  { key: "json", label: "JSON.parse / JSON.stringify", mechanism: true, test: NATIVE(/^(JSON\.)?(parse|stringify)$|^Json(Parse|Stringify)/) },
  { key: "clone", label: "structuredClone", mechanism: true, test: (f) => f.functionName === "structuredClone" },
  {
    key: "sql", label: "SQL: sql.exec, cursors, alarms, transactionSync; src/workflow/store.ts", mechanism: true,
    test: any(NATIVE(/^(exec|toArray|one|raw|columnNames|transactionSync|setAlarm|getAlarm|deleteAlarm)$/), (f) => /^src\/workflow\/(store|schema|inbox-rows|outbox-rows)\.ts$/.test(f.url)),
  },
  { key: "d1", label: "D1 index writes: src/workflow-index, the D1 API", mechanism: true, test: (f) => f.url.startsWith("src/workflow-index/") || (/d1/i.test(f.url) && RUNTIME_URL.test(f.url)) },
  {
    key: "crypto", label: "crypto: HMAC task tokens (crypto.subtle), hashes", mechanism: true,
    test: any(NATIVE(/^(sign|verify|importKey|exportKey|digest|getRandomValues|randomUUID)$/), (f) => /^src\/domain\/security\/(task-token|sha256|base64url)\.ts$/.test(f.url)),
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
  { key: "scheduler", label: "scheduler object: src/workflow (but the store)", test: SRC("workflow/") },
  { key: "agents", label: "agents: src/agents", test: SRC("agents/") },
  { key: "api", label: "front door: src/api, src/admission", test: any(SRC("api/"), SRC("admission/")) },
  { key: "ours", label: "other code of ours: src/", test: SRC("") },
  { key: "libraries", label: "other libraries (node_modules)", test: (f) => /(^|\/)node_modules\//.test(f.url) && !/\/wrangler\//.test(f.url) },
];
/** Claims every frame: what is left. */
const OTHER: Category & { test: FrameTest } = { key: "other", label: "other: wrangler's and miniflare's wrappers, unmapped code", test: () => true };
/** For a stack no category claims, by its leaf. */
const FALLBACK: Array<Category & { test: FrameTest }> = [
  { key: "runtime", label: "runtime built-ins and natives (workerd)", test: (f) => f.url === "" || RUNTIME_URL.test(f.url) },
  OTHER,
];

const LEAF_ONLY = CATEGORIES.filter((category) => category.leaf);
const BY_FRAME = CATEGORIES.filter((category): category is Category & { test: FrameTest } => category.test !== undefined);

/**
 * The category of a stack (leaf first): GC, (idle), (program) by the leaf alone; else the innermost frame a
 * category claims; else the leaf's fallback.
 */
export function categoryOf(frames: readonly CallFrame[]): Category {
  const leaf = frames[0];
  if (!leaf) return OTHER;
  const special = LEAF_ONLY.find((category) => category.leaf === leaf.functionName);
  if (special) return special;
  for (const frame of frames) {
    const category = BY_FRAME.find((candidate) => candidate.test(frame));
    if (category) return category;
  }
  return FALLBACK.find((candidate) => candidate.test(leaf)) ?? OTHER;
}
