/**
 * When a failing delivery goes again, as near as its record can tell. The retry is the workflow's: its object sends
 * the webhook message again after SEND_RETRY's backoff (1 s, 2 s … 60 s) for the failures in a row, which for an event
 * its receiver keeps refusing are the delivery's attempts but the last. The next try is only known to that object, so
 * this is an estimate: the jitter (±20 %) and the alarm's and the queue's delays move the real one a little.
 */
import { backoffMs } from "../domain/machine/backoff";
import { SEND_RETRY } from "../workflow/delivery-policy";
import type { DeliveryView } from "./spec";

/** The middle of the jitter's range: the delay as the policy states it. */
const NO_JITTER = () => 0.5;

/** About when a `failing` delivery is tried again; undefined for one that is delivered or given up. */
export function expectedNextAttemptAt(delivery: Pick<DeliveryView, "status" | "attempts" | "lastAt">): number | undefined {
  if (delivery.status !== "failing") return undefined;
  return delivery.lastAt + backoffMs(delivery.attempts - 1, SEND_RETRY, NO_JITTER);
}
