// Test-only bindings, added by vitest.config.ts on top of the Worker's Env (src/env.d.ts).
declare namespace Cloudflare {
  interface Env {
    TEST_MIGRATIONS: import("cloudflare:test").D1Migration[];
  }
}
