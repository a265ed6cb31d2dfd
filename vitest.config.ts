import { fileURLToPath } from "node:url";
import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-plugin";
import { unstable_readConfig } from "wrangler";
import { defineConfig } from "vitest/config";

export default defineConfig(async () => {
  // Read D1 migrations in Node.js; a setup file applies them inside the Workers runtime.
  const migrations = await readD1Migrations(fileURLToPath(new URL("./migrations", import.meta.url)));
  // What a deployment gets from wrangler.toml, so a test can show that configuration refuses dev-only hooks.
  const deployedVars = unstable_readConfig({ config: fileURLToPath(new URL("./wrangler.toml", import.meta.url)) }).vars;

  return {
    test: {
      projects: [
        {
          plugins: [
            cloudflareTest({
              main: "./src/index.ts",
              wrangler: { configPath: "./wrangler.toml" },
              miniflare: {
                compatibilityDate: "2026-11-01",
                bindings: {
                  TASK_TOKEN_SECRET: "test-task-token-secret",
                  ALLOW_PRIVATE_TARGETS: "true",
                  DEV_HOOKS: "true",
                  // Two task queues (wrangler.toml binds TASKS and TASKS_1), so the sharded paths are what the tests run.
                  TASK_QUEUE_SHARDS: "2",
                  // Two index databases (wrangler.toml binds DB and DB_1): every tenant's workflows spread over both.
                  INDEX_SHARDS: "2",
                  // The tests watch first attempts go through the task queue (they spy on it and hold its messages);
                  // test/agents/start-hand-off.test.ts covers the hand-off that skips it, the default elsewhere.
                  START_HAND_OFF: "false",
                  // Tests start many workflows of one tenant at once; test/admission/starts-in-flight.test.ts sets its own cap.
                  TENANT_STARTS_IN_FLIGHT: "0",
                  // Tenants of the tests (and alice, a named token of tenant default); test/helpers/api.ts holds the same tokens.
                  API_TOKENS: "default:test-token-default,default:alice:test-token-alice,alpha:test-token-alpha,beta:test-token-beta,gamma:test-token-gamma,lister:test-token-lister",
                  // Only tenant gamma is limited to an allowlist (test/api/allowed-targets.test.ts).
                  ALLOWED_TARGETS: JSON.stringify({ gamma: ["allowed.example", "*.allowed.example"] }),
                  // Test-only binding consumed by test/setup/apply-migrations.ts.
                  TEST_MIGRATIONS: migrations,
                  TEST_DEPLOYED_VARS: deployedVars,
                },
                ratelimits: {
                  // The fuzzing alone writes more than wrangler.toml's 1000 per 10 s for one tenant on a fast machine,
                  // so the tests lift the per-tenant limit; the limit's behaviour is tested with the strict binding.
                  TENANT_WRITE_LIMIT: { namespace_id: "1001", simple: { limit: 1_000_000, period: 10 } },
                  // A tight limit for the rate-limit test (test/reliability/case-24-rate-limit.test.ts).
                  TEST_STRICT_WRITE_LIMIT: { namespace_id: "9001", simple: { limit: 5, period: 10 } },
                },
              },
            }),
          ],
          test: {
            name: "workers",
            include: ["test/**/*.test.ts"],
            // The dashboard's tests drive a real browser against a running service: `npm run test:browser`.
            // The CLI's run in Node (the project below).
            exclude: ["test/browser/**", "test/cli/**", "node_modules/**"],
            setupFiles: ["./test/setup/apply-migrations.ts"],
          },
        },
        {
          // The CLI as people run it: child processes against the real service under wrangler dev, started once per file.
          test: {
            name: "cli",
            include: ["test/cli/**/*.test.ts"],
            environment: "node",
            testTimeout: 60_000,
            hookTimeout: 120_000,
          },
        },
      ],
    },
  };
});
