/**
 * What a Standard Webhooks signing secret looks like: `whsec_` and the base64 of its key. Pure, so the start body's
 * `notify.secret` (domain/language/notify.ts) and a webhook subscription's `secret` are checked by the same rule.
 */
import { z } from "zod";

/** Key sizes the Standard Webhooks spec allows. */
export const MIN_KEY_BYTES = 24;
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

/** A signing secret as a body field takes it. */
export const WebhookSecretSchema = z
  .string()
  .max(SECRET_MAX_LENGTH)
  .regex(SECRET_PATTERN, `must be whsec_ followed by the base64 of ${MIN_KEY_BYTES} to ${MAX_KEY_BYTES} bytes`)
  .superRefine((secret, ctx) => {
    const problem = secretProblem(secret);
    if (problem) ctx.addIssue({ code: "custom", message: problem });
  });
