// Retry and timeout policies for test workflows.

/**
 * Millisecond-scale policies, for tests whose deadlines are incidental: a retry after a remote's 503, a backoff
 * the test does not look at. The real alarm handles them within a few milliseconds.
 */
export const FAST = {
  retry: { maxAttempts: 3, initialIntervalMs: 20, backoffCoefficient: 2, maxIntervalMs: 200, jitter: 0 },
  timeouts: { scheduleToStartMs: 5_000, startToCloseMs: 5_000, heartbeatMs: 2_000 },
  // The tests of a file share a tenant and the fake remote's host, so the failures of one test would count
  // towards the host's breaker in the next; only the breaker's own tests (test/breakers/) let it open.
  breaker: { failures: 100 },
};

/**
 * Realistic policies, for tests about a deadline: none passes by itself while a test runs, so the test moves
 * time past each one (`elapse` in ./time.ts) and the alarm acts exactly when the test says. No schedule-to-start,
 * the contract's default; the agent heartbeats every 10 s, so not during a test.
 */
export const PATIENT = {
  retry: { maxAttempts: 3, initialIntervalMs: 5_000, backoffCoefficient: 2, maxIntervalMs: 60_000, jitter: 0 },
  timeouts: { startToCloseMs: 300_000, heartbeatMs: 30_000 },
};
