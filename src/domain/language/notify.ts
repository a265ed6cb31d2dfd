/**
 * A start's `notify`: where the workflow's final view is POSTed when it ends (completed, failed, compensated,
 * cancelled or terminated), signed as webhooks are when a `secret` is given. The URL's form is checked here; whether
 * the tenant may call it (https, no private hosts, ALLOWED_TARGETS) is the target policy's word, at the start and again
 * at each delivery.
 */
import { z } from "zod";
import { WebhookSecretSchema } from "../security/webhook-secret";

/** A URL as long as a webhook's. */
export const NOTIFY_URL_MAX_LENGTH = 2048;

export const NotifySchema = z.strictObject({
  url: z.string().min(1).max(NOTIFY_URL_MAX_LENGTH),
  /** The Standard Webhooks signing secret; without one the notice carries no `webhook-signature`. */
  secret: WebhookSecretSchema.optional(),
});

export type Notify = z.infer<typeof NotifySchema>;

/** What the workflow's view shows of its `notify`: never the secret, only whether there is one. */
export function notifyInView(notify: Notify): { url: string; signed: boolean } {
  return { url: notify.url, signed: notify.secret !== undefined };
}
