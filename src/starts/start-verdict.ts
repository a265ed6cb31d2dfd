/**
 * What becomes of a start message, from what the start answered: started (or already started with this body),
 * never to start (a dead letter), or deferred. A start message has no client to retry it, so nothing that may pass
 * is ever a dead letter: it waits in the queue for as long as it takes.
 */
import type { StartOutcome } from "../admission/start-workflow";
import { backoffMs } from "../domain/machine/backoff";
import type { DeadLetterError } from "./dead-letter";

export type StartVerdict =
  | { kind: "started"; created: boolean }
  | { kind: "dead"; error: DeadLetterError }
  | { kind: "deferred"; delaySeconds: number; reason: string };

/** After a failure (no Retry-After to go by), a message comes back after 2 s, 4 s, 8 s … at most 5 minutes. */
const DEFERRAL = { initialMs: 2_000, maxMs: 300_000, jitter: 0.2 };

export function verdictOf(outcome: StartOutcome, deliveries: number): StartVerdict {
  if (outcome.ok) return { kind: "started", created: outcome.created };
  switch (outcome.code) {
    // Back-pressure: deferred by as long as the front door would tell a client to wait.
    case "overloaded":
      return { kind: "deferred", delaySeconds: Math.max(1, outcome.retryAfterSeconds), reason: outcome.message };
    // The deployment's settings (TASK_TOKEN_SECRET, ALLOWED_TARGETS) are at fault, not the message: it starts once they are fixed.
    case "not_configured":
      return deferredAfterFailure(deliveries, outcome.message);
    // An answer about the message itself (its definition, its reference, its id taken by another body): the same every time.
    default:
      return { kind: "dead", error: { code: outcome.code, message: outcome.message, ...("details" in outcome ? { details: outcome.details } : {}) } };
  }
}

export type Deferral = Extract<StartVerdict, { kind: "deferred" }>;

/** A start that could not be made now (an object overloaded or unreachable, D1 down): the `deliveries`-th failed. */
export function deferredAfterFailure(deliveries: number, reason: string, random: () => number = Math.random): Deferral {
  return { kind: "deferred", delaySeconds: delayAfterFailureSeconds(deliveries, random), reason };
}

/** How long a message waits after its `deliveries`-th delivery failed. */
export function delayAfterFailureSeconds(deliveries: number, random: () => number = Math.random): number {
  return Math.max(1, Math.round(backoffMs(deliveries - 1, DEFERRAL, random) / 1_000));
}
