// Bindings and variables available to the Worker (see wrangler.toml).
// Kept by hand on purpose; update it together with wrangler.toml.

interface ShepherdEnv {
  WORKFLOW_SCHEDULER: DurableObjectNamespace<import("./scheduler/workflow-scheduler").WorkflowScheduler>;
  /** Where claimed attempts run (src/agents/agent-host.ts), sharded by hash. */
  AGENT_HOST: DurableObjectNamespace<import("./agents/agent-host").AgentHost>;
  /** The task queue's lag as its consumers see it (src/queue-lag/monitor.ts): one object. */
  QUEUE_LAG: DurableObjectNamespace<import("./queue-lag/monitor").QueueLagMonitor>;
  TASKS: Queue<unknown>;
  DB: D1Database;
  /** Per-tenant write rate limit (wrangler.toml [[ratelimits]]); absent means unlimited. */
  TENANT_WRITE_LIMIT?: RateLimit;
  /** Secret used to sign per-task callback tokens. Local dev and tests set it explicitly. */
  TASK_TOKEN_SECRET: string;
  /** "true" allows task targets on private/loopback addresses (local dev and tests only). */
  ALLOW_PRIVATE_TARGETS?: string;
  /** Comma-separated "tenant:token" pairs; without it every /v1 route except /v1/tasks answers 401. */
  API_TOKENS?: string;
  /** Optional per-tenant host allowlist for http actions: JSON text or a [vars] table (see README). */
  ALLOWED_TARGETS?: string | Record<string, string[]>;
  /** Milliseconds past its indexed deadline before the cron sweep wakes a workflow (default 60000). */
  SWEEP_GRACE_MS?: string;
  /** Milliseconds of task-queue lag past which new starts get 503 with Retry-After (default 10000). */
  BACKPRESSURE_LAG_MS?: string;
  /** "true" enables the dev-only routes and fault injection (npm start, tests); never set in wrangler.toml. */
  DEV_HOOKS?: string;
  /** Dev only: JSON object of fault name to probability (see src/dev/faults.ts); ignored without DEV_HOOKS. */
  FAULTS?: string;
}

interface Env extends ShepherdEnv {}

declare namespace Cloudflare {
  // `env` from "cloudflare:workers" and "cloudflare:test" is typed as Cloudflare.Env.
  interface Env extends ShepherdEnv {}
  // Types `exports` from "cloudflare:workers" (ctx.exports / exports.default in tests).
  interface GlobalProps {
    mainModule: typeof import("./index");
    durableNamespaces: "WorkflowScheduler" | "AgentHost" | "QueueLagMonitor";
  }
}
