/**
 * Webhook secrets and signatures in the Standard Webhooks format: a secret is `whsec_` and the base64 of its key
 * (domain/security/webhook-secret.ts checks one);
 * a signature is `v1,<base64 HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<body>">`. Signed by the
 * `standardwebhooks` package itself, so receivers can verify with any Standard Webhooks library.
 */
import { Webhook } from "standardwebhooks";
import { MIN_KEY_BYTES } from "../domain/security/webhook-secret";

/** A fresh secret: 24 random bytes, as the Standard Webhooks spec recommends. */
export function newSecret(): string {
  const key = crypto.getRandomValues(new Uint8Array(MIN_KEY_BYTES));
  return `whsec_${btoa(String.fromCharCode(...key))}`;
}

/** The `webhook-signature` header for one message. `timestamp` is the `webhook-timestamp` header, in seconds. */
export function signatureHeader(secret: string, messageId: string, timestamp: number, body: string): string {
  return new Webhook(secret).sign(messageId, new Date(timestamp * 1000), body);
}
