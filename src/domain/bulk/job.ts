/** A bulk job as it is stored and shown: what it was asked, and how far it got. */
import { z } from "zod";
import { BULK_ACTIONS, type BulkAction, type BulkJobStatus } from "../contract";
import { SendEventSchema } from "../language/schemas";
import type { SentEvent } from "../machine/events";
import { BulkFilterSchema, type BulkFilter } from "./request";

/** What a job was asked to do, fixed when it is created. */
export interface BulkJobSpec {
  id: string;
  tenant: string;
  action: BulkAction;
  filter: BulkFilter;
  reason?: string;
  /** For `action: "event"`: the event each workflow is sent, and why when it says. */
  event?: SentEvent & { reason?: string };
  /** Who created the job: its actions are theirs. */
  actor: string;
  createdAt: number;
}

/** Whether two specs ask for the same job: what a retried `POST /v1/bulk` under the same id must repeat (not who, nor when). */
export function sameBulkRequest(a: BulkJobSpec, b: BulkJobSpec): boolean {
  const asked = ({ action, filter, reason, event }: BulkJobSpec) => JSON.stringify({ action, filter, reason, event });
  return asked(a) === asked(b);
}

/** The spec as the job's object reads it back from its row. */
export const BulkJobSpecSchema = z.object({
  id: z.string(),
  tenant: z.string(),
  action: z.enum(BULK_ACTIONS),
  filter: BulkFilterSchema,
  reason: z.string().optional(),
  event: SendEventSchema.optional(),
  actor: z.string(),
  createdAt: z.number(),
}) satisfies z.ZodType<BulkJobSpec>;

/** One workflow the action was refused for, and why. */
export interface BulkError {
  workflowId: string;
  code: string;
  message: string;
}

/**
 * How far a job got. Every matching workflow is one row of the job, counted once: `matched` = `done` + `failed` +
 * those not yet settled, and once the job is `done`, `matched` = `done` + `failed`. The job reads every page of the
 * index before it acts: `matched` grows first (until `listed`), then `done` and `failed` do.
 */
export interface BulkProgress {
  matched: number;
  done: number;
  failed: number;
  /** Every page of the index has been read: `matched` will not grow. */
  listed: boolean;
  endedAt?: number;
  errors: BulkError[];
}

export interface BulkJobView {
  id: string;
  action: BulkAction;
  status: BulkJobStatus;
  matched: number;
  done: number;
  failed: number;
  errors: BulkError[];
  filter: BulkFilter;
  reason?: string;
  event?: SentEvent & { reason?: string };
  actor: string;
  createdAt: number;
  endedAt?: number;
}

export function toBulkJobView(spec: BulkJobSpec, progress: BulkProgress): BulkJobView {
  const { id, action, filter, reason, event, actor, createdAt } = spec;
  const { matched, done, failed, errors, endedAt } = progress;
  return {
    id, action, status: endedAt === undefined ? "running" : "done", matched, done, failed, errors, filter,
    ...(reason === undefined ? {} : { reason }), ...(event === undefined ? {} : { event }), actor, createdAt,
    ...(endedAt === undefined ? {} : { endedAt }),
  };
}
