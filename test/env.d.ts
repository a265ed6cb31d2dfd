// Test-only bindings, added by vitest.config.ts on top of the Worker's Env (worker-configuration.d.ts, src/env.d.ts).
declare namespace Cloudflare {
  interface Env {
    TEST_MIGRATIONS: import("cloudflare:test").D1Migration[];
    /** The [vars] of wrangler.toml: what a deployed Worker is configured with. */
    TEST_DEPLOYED_VARS: Record<string, unknown>;
    /** Like TENANT_WRITE_LIMIT but 5 writes per 10 s. */
    TEST_STRICT_WRITE_LIMIT: RateLimit;
  }
}
