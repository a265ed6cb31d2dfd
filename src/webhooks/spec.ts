/** What a webhook subscription is, as the API takes it and shows it, and the queue message that delivers to it. */
import { z } from "zod";
import { FILTER_PATTERN, filterProblem } from "./event-names";
import { WebhookSecretSchema } from "../domain/security/webhook-secret";

/** Subscriptions per tenant: each is posted to in turn for every event, so their number bounds a message's work. */
export const WEBHOOKS_PER_TENANT = 20;

const FilterSchema = z
  .string()
  .max(64)
  .regex(FILTER_PATTERN, "must be an event name (workflow.completed), a prefix and .* (step.*), or *");

/** PUT /v1/webhooks/{id}. Without `secret`, a new subscription gets one made for it (and a replaced one keeps its own). */
export const WebhookSpecSchema = z.strictObject({
  url: z.string().min(1).max(2048),
  events: z
    .array(FilterSchema)
    .min(1)
    .max(50)
    .superRefine((filters, ctx) => {
      filters.forEach((filter, index) => {
        const problem = filterProblem(filter);
        if (problem) ctx.addIssue({ code: "custom", path: [index], message: problem });
      });
    }),
  secret: WebhookSecretSchema.optional(),
});

export type WebhookSpec = z.infer<typeof WebhookSpecSchema>;

/** A subscription as the API shows it: never with its secret, except once in the answer that made it. */
export const WebhookViewSchema = z.object({
  id: z.string(),
  url: z.string(),
  events: z.array(z.string()),
  createdAt: z.number(),
  updatedAt: z.number(),
});

export type WebhookView = z.infer<typeof WebhookViewSchema>;

export const DELIVERY_STATUSES = ["delivered", "failing", "failed"] as const;

/** One (subscription, event) pair: `failing` is still retried, `failed` was given up. */
export const DeliveryViewSchema = z.object({
  eventId: z.string(),
  type: z.string(),
  workflowId: z.string(),
  status: z.enum(DELIVERY_STATUSES),
  attempts: z.number(),
  lastStatus: z.number().optional(),
  lastError: z.string().optional(),
  firstAt: z.number(),
  lastAt: z.number(),
  /** While `failing`: about when it is tried again (see next-attempt.ts: an estimate, give or take 20 %). */
  nextAttemptAt: z.number().optional(),
});

export type DeliveryView = z.infer<typeof DeliveryViewSchema>;
