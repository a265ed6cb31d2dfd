// Bindings and variables available to the Worker (see wrangler.toml).
// Kept by hand on purpose; update it together with wrangler.toml.

interface ShepherdEnv {
  WORKFLOW_SCHEDULER: DurableObjectNamespace<import("./scheduler/workflow-scheduler").WorkflowScheduler>;
  TASKS: Queue<unknown>;
  DB: D1Database;
  /** Secret used to sign per-task callback tokens. Local dev and tests set it explicitly. */
  TASK_TOKEN_SECRET: string;
  /** "true" allows task targets on private/loopback addresses (local dev and tests only). */
  ALLOW_PRIVATE_TARGETS?: string;
  /** API tokens, e.g. "tenant:token" pairs. */
  API_TOKENS?: string;
}

interface Env extends ShepherdEnv {}

declare namespace Cloudflare {
  // `env` from "cloudflare:workers" and "cloudflare:test" is typed as Cloudflare.Env.
  interface Env extends ShepherdEnv {}
  // Types `exports` from "cloudflare:workers" (ctx.exports / exports.default in tests).
  interface GlobalProps {
    mainModule: typeof import("./index");
    durableNamespaces: "WorkflowScheduler";
  }
}
