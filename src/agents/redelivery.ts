import { backoffMs } from "../domain/machine/backoff";

/** A message the consumer could not hand on comes back after 2 s, 4 s, 8 s … at most a minute. */
const REDELIVERY = { initialMs: 2_000, maxMs: 60_000 };

/** How long the queue should wait before delivering a message again, after its `attempts`-th delivery failed. */
export function redeliveryDelaySeconds(attempts: number): number {
  return Math.round(backoffMs(attempts - 1, REDELIVERY) / 1_000);
}
