/**
 * The body of `POST /v1/bulk`: what to do, and to which workflows. Temporal's batch operations require a query, and
 * so does this: a filter must name at least one of its fields, so `{}` never quietly means "every workflow". To act
 * on all of a tenant's workflows, say so with a bound that covers them (`"createdBefore": <now>`).
 */
import { z } from "zod";
import { BULK_ACTIONS, MAX_BULK_IDS, WORKFLOW_STATUSES } from "../contract";
import { IdSchema, ReasonSchema, SendEventSchema } from "../language/schemas";

/** Epoch milliseconds, as every `...At` of the API. */
const EpochMsSchema = z.int().min(0);

/**
 * Which workflows a bulk job acts on: every field given must hold (they are ANDed), over the tenant's workflows as
 * the index lists them. The created range is half-open: `createdAfter` <= createdAt < `createdBefore`.
 */
export const BulkFilterSchema = z
  .strictObject({
    status: z.enum(WORKFLOW_STATUSES).optional(),
    /** The definition's name. */
    name: IdSchema.optional(),
    /** Only workflows created before this time (exclusive). */
    createdBefore: EpochMsSchema.optional(),
    /** Only workflows created at or after this time. */
    createdAfter: EpochMsSchema.optional(),
    /** Only the child workflows of this workflow's steps. */
    parentId: IdSchema.optional(),
    /** Only these workflows (at most MAX_BULK_IDS); one the tenant does not have is not matched. */
    ids: z.array(IdSchema).min(1).max(MAX_BULK_IDS).optional(),
    /** Only workflows whose id starts with this, as the list's `idPrefix` (a prefix of an id is itself an id). */
    idPrefix: IdSchema.optional(),
  })
  .superRefine((filter, ctx) => {
    if (Object.values(filter).every((value) => value === undefined)) {
      ctx.addIssue({ code: "custom", message: "must name at least one of status, name, createdBefore, createdAfter, parentId, ids or idPrefix (an empty filter is never read as every workflow)" });
    }
    if (filter.createdAfter !== undefined && filter.createdBefore !== undefined && filter.createdAfter >= filter.createdBefore) {
      ctx.addIssue({ code: "custom", path: ["createdAfter"], message: "must be before createdBefore (the range would be empty)" });
    }
  });

export const BulkRequestSchema = z
  .strictObject({
    /**
     * The client's name for the job, which makes the request safe to retry: the same id with the same request again
     * answers the job, a different request under it is a conflict. Without it the service makes one.
     */
    id: IdSchema.optional(),
    action: z.enum(BULK_ACTIONS),
    filter: BulkFilterSchema,
    /** Why: kept with the job, and recorded with each workflow's action in its history, with who acted. */
    reason: ReasonSchema.optional(),
    /**
     * For `action: "event"` only, and required then: the body `POST /v1/workflows/{id}/events` takes (its own
     * `reason`, when given, is the one its history records).
     */
    event: SendEventSchema.optional(),
  })
  .superRefine((request, ctx) => {
    if (request.action === "event" && request.event === undefined) ctx.addIssue({ code: "custom", path: ["event"], message: 'is required when action is "event"' });
    if (request.action !== "event" && request.event !== undefined) ctx.addIssue({ code: "custom", path: ["event"], message: 'is only for action "event"' });
  });

export type BulkFilter = z.infer<typeof BulkFilterSchema>;
export type BulkRequest = z.infer<typeof BulkRequestSchema>;
