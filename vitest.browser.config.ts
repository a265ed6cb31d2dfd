import { defineConfig } from "vitest/config";

/**
 * `npm run test:browser`: the dashboard in headless Chromium (Debian's package, driven by playwright-core)
 * against the real service under `wrangler dev` and the example remote, both started once by the global
 * setup. One file at a time: one service, one browser, a 2-core machine.
 */
export default defineConfig({
  test: {
    include: ["test/browser/**/*.test.ts"],
    environment: "node",
    globalSetup: ["./test/browser/support/global-setup.ts"],
    fileParallelism: false,
    // A real service and a real browser: a workflow with retries takes seconds, not milliseconds.
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
});
