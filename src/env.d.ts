// What the Worker reads from its environment besides the bindings: secrets and optional settings, which
// wrangler.toml does not hold, so `wrangler types` cannot see them. The bindings themselves (objects, queue,
// D1, rate limit, [vars]) are generated from wrangler.toml into worker-configuration.d.ts by `npm run types`;
// `npm run typecheck` fails when that file is out of date.

interface ShepherdSettings {
  /** Secret used to sign per-task callback tokens. Local dev and tests set it explicitly. */
  TASK_TOKEN_SECRET: string;
  /** Comma-separated "tenant:token" pairs; without it every /v1 route except /v1/tasks answers 401. */
  API_TOKENS?: string;
  /** Optional per-tenant host allowlist for http actions: JSON text or a [vars] table (see README). */
  ALLOWED_TARGETS?: string | Record<string, string[]>;
  /** Milliseconds past its indexed deadline before the cron sweep wakes a workflow (default 60000). */
  SWEEP_GRACE_MS?: string;
  /** Milliseconds of task-queue lag past which new starts get 503 with Retry-After (default 10000). */
  BACKPRESSURE_LAG_MS?: string;
  START_HAND_OFF?: string;
  /** Starts of one tenant and workflow name in progress at once in one isolate; past it 429 with Retry-After 1 (default 8, 0: no cap). */
  TENANT_STARTS_IN_FLIGHT?: string;
  /** The most items one map may run, 1 to 100000 (default 10000; see docs/capacity.md before raising it). */
  MAP_MAX_ITEMS?: string;
  /** AgentHost objects the remote calls are spread over, 1 to 10000 (default 64). */
  AGENT_HOST_SHARDS?: string;
  /** Task queues a workflow's messages are spread over by its id, 1 to the TASKS bindings present (default 1). */
  TASK_QUEUE_SHARDS?: string;
  /** D1 databases the workflow index is spread over, 1 to the DB bindings present (default 1). */
  INDEX_SHARDS?: string;
  /** How many of the index shards one tenant's workflows spread over, 1 to INDEX_SHARDS (default all). */
  INDEX_SHARDS_PER_TENANT?: string;
  /** The tenant shown the STARTS queue's dead letters that name no tenant of API_TOKENS (default: the only tenant, if one). */
  STARTS_DEAD_LETTER_TENANT?: string;
  /** "true" enables the dev-only routes and fault injection (npm start, tests); never set in wrangler.toml. */
  DEV_HOOKS?: string;
  /** Dev only: JSON object of fault name to probability (see src/dev/faults.ts); ignored without DEV_HOOKS. */
  FAULTS?: string;
  /** Dev only: comma-separated tenants whose work no fault is injected into (see src/dev/faults.ts). */
  FAULT_FREE_TENANTS?: string;
}

// The global `Env` and `Cloudflare.Env` (what `env` from "cloudflare:workers" and "cloudflare:test" is) alike.
interface Env extends ShepherdSettings {}

declare namespace Cloudflare {
  interface Env extends ShepherdSettings {}
}
