/**
 * One POST of one message to one receiver (a webhook's event, a workflow's end notice), signed when there is a secret;
 * never throws for the receiver's behaviour.
 */
import { checkTarget, type TargetPolicy } from "../domain/security/target-policy";
import { signatureHeader } from "./signature";

/** Where a message goes: a subscription, or a start's `notify` (whose secret is optional). */
export interface Receiver {
  url: string;
  secret?: string | undefined;
}

/** How long a receiver has to answer before the attempt counts as failed. */
export const RECEIVER_TIMEOUT_MS = 10_000;

export type PostOutcome =
  | { ok: true; status: number }
  /** `permanent`: retrying cannot help (the target is refused), so the message is given up at once. */
  | { ok: false; status?: number; error: string; permanent: boolean };

export async function postEvent(receiver: Receiver, eventId: string, body: string, policy: TargetPolicy): Promise<PostOutcome> {
  // Checked again at each delivery: the tenant's allowlist may have changed since the subscription or the start.
  const refusal = checkTarget(receiver.url, policy);
  if (refusal) return { ok: false, error: `target refused: ${refusal}`, permanent: true };
  const timestamp = Math.floor(Date.now() / 1000);
  const headers = {
    "Content-Type": "application/json",
    "User-Agent": "Shepherd-Webhooks/1",
    "webhook-id": eventId,
    "webhook-timestamp": String(timestamp),
    ...(receiver.secret === undefined ? {} : { "webhook-signature": signatureHeader(receiver.secret, eventId, timestamp, body) }),
  };
  // A timer cleared once answered, not AbortSignal.timeout: a pending timer keeps a Durable Object (the end notice's
  // sender) from being evicted for the whole 10 s.
  const timeout = new AbortController();
  const timer = setTimeout(() => timeout.abort(), RECEIVER_TIMEOUT_MS);
  try {
    // Redirects are not followed: the place they lead to was never checked against the tenant's targets.
    const response = await fetch(receiver.url, { method: "POST", headers, body, redirect: "manual", signal: timeout.signal });
    await response.body?.cancel();
    if (response.ok) return { ok: true, status: response.status };
    return { ok: false, status: response.status, error: `receiver answered ${response.status}`, permanent: false };
  } catch (error) {
    if (timeout.signal.aborted) return { ok: false, error: `no answer within ${RECEIVER_TIMEOUT_MS / 1000} s`, permanent: false };
    return { ok: false, error: `network error: ${error instanceof Error ? error.message : String(error)}`.slice(0, 500), permanent: false };
  } finally {
    clearTimeout(timer);
  }
}
