import { z } from "zod";

/** One message of the webhook queue: deliver this workflow's events after `afterSeq`. */
export const WebhookMessageSchema = z.object({
  tenant: z.string(),
  workflowId: z.string(),
  workflowName: z.string(),
  afterSeq: z.int().min(0),
});

export type WebhookMessage = z.infer<typeof WebhookMessageSchema>;

/**
 * What the consumer tells the workflow's object about the message sent for `afterSeq`: every subscription has
 * its events through `throughSeq` (`delivered`), or one of them failed after that (`failed`), or the tenant has
 * no subscription at all (`none`).
 */
export interface WebhookReport {
  afterSeq: number;
  throughSeq: number;
  outcome: "delivered" | "failed" | "none";
}
