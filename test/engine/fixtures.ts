/** Millisecond-scale policies so tests exercise real deadlines, alarms and backoff without waiting long. */
export const FAST = {
  retry: { maxAttempts: 3, initialIntervalMs: 20, backoffCoefficient: 2, maxIntervalMs: 200, jitter: 0 },
  timeouts: { scheduleToStartMs: 5_000, startToCloseMs: 5_000, heartbeatMs: 2_000 },
};
