/**
 * Webhook secrets and signatures in the Standard Webhooks format: a secret is `whsec_` and the base64 of its key;
 * a signature is `v1,<base64 HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<body>">`. Signed by the
 * `standardwebhooks` package itself, so receivers can verify with any Standard Webhooks library.
 */
import { Webhook } from "standardwebhooks";

/** Key sizes the Standard Webhooks spec allows. */
const MIN_KEY_BYTES = 24;
const MAX_KEY_BYTES = 64;
/** Canonical base64 of at least 24 bytes (8 groups of 4); the upper bound is checked on the decoded key. */
export const SECRET_PATTERN = /^whsec_(?:[A-Za-z0-9+/]{4}){8,}(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
export const SECRET_MAX_LENGTH = "whsec_".length + 4 * Math.ceil(MAX_KEY_BYTES / 3);

/** Why a given secret cannot be used, or undefined when it can. */
export function secretProblem(secret: string): string | undefined {
  if (!SECRET_PATTERN.test(secret)) return `must be whsec_ followed by the base64 of ${MIN_KEY_BYTES} to ${MAX_KEY_BYTES} bytes`;
  const bytes = atob(secret.slice("whsec_".length)).length;
  return bytes > MAX_KEY_BYTES ? `its key is ${bytes} bytes; at most ${MAX_KEY_BYTES}` : undefined;
}

/** A fresh secret: 24 random bytes, as the Standard Webhooks spec recommends. */
export function newSecret(): string {
  const key = crypto.getRandomValues(new Uint8Array(MIN_KEY_BYTES));
  return `whsec_${btoa(String.fromCharCode(...key))}`;
}

/** The `webhook-signature` header for one message. `timestamp` is the `webhook-timestamp` header, in seconds. */
export function signatureHeader(secret: string, messageId: string, timestamp: number, body: string): string {
  return new Webhook(secret).sign(messageId, new Date(timestamp * 1000), body);
}
