/**
 * The query of `GET /v1/workflows`: its filters (the bulk job's names for the created range, epoch ms or ISO 8601
 * here as in every query string) and its page. Checked whole, so a bad value is a 400 naming it and reads nothing.
 */
import { z } from "@hono/zod-openapi";
import { LIST_PAGE_DEFAULT, LIST_PAGE_MAX } from "../domain/contract";
import { parseInstant } from "../domain/instant";
import { IdSchema } from "../domain/language/schemas";
import { WORKFLOW_STATUSES } from "../domain/machine/state";
import { decodeCursor } from "../workflow-index/cursor";
import type { ListQuery } from "../workflow-index/d1-index";
import { validationFailed, type ValidationIssue } from "./errors";
import { instantQuery } from "./instant-query";

export const ListQuerySchema = z.strictObject({
  status: z.enum(WORKFLOW_STATUSES).optional().openapi({ description: "Only workflows with this status" }),
  name: IdSchema.optional().openapi({ description: "Only workflows of this definition name" }),
  parentId: IdSchema.optional().openapi({ description: "Only the child workflows this workflow's steps started" }),
  createdAfter: instantQuery("Only workflows created at or after this time: epoch ms or ISO 8601"),
  createdBefore: instantQuery("Only workflows created before this time (exclusive): epoch ms or ISO 8601"),
  // A prefix of an id is itself a well-formed id, so the id's own pattern checks it.
  idPrefix: IdSchema.optional().openapi({ description: "Only workflows whose id starts with this (case-sensitive)", example: "order-" }),
  limit: z.coerce.number().int().min(1).max(LIST_PAGE_MAX).optional().openapi({ description: `Workflows per page, at most ${LIST_PAGE_MAX} (default ${LIST_PAGE_DEFAULT})` }),
  cursor: z.string().min(1).max(1024).optional().openapi({ description: "A previous page's nextCursor" }),
});

const NOT_A_DATE = "is not a date: give epoch milliseconds or an ISO 8601 date-time such as 2024-05-01T12:00:00Z";

/** The index query the request asks for; a 400 naming each value that the schema let through but is no time, or no cursor. */
export function listQueryOf(query: z.output<typeof ListQuerySchema>): ListQuery {
  const { status, name, parentId, idPrefix, limit = LIST_PAGE_DEFAULT, cursor } = query;
  const issues: ValidationIssue[] = [];
  const instant = (field: "createdAfter" | "createdBefore") => {
    const text = query[field];
    const at = text === undefined ? undefined : parseInstant(text);
    if (text !== undefined && at === undefined) issues.push({ code: "custom", path: [field], message: NOT_A_DATE });
    return at;
  };
  const createdAfter = instant("createdAfter");
  const createdBefore = instant("createdBefore");
  if (createdAfter !== undefined && createdBefore !== undefined && createdAfter >= createdBefore) {
    issues.push({ code: "custom", path: ["createdAfter"], message: "must be before createdBefore (the range would be empty)" });
  }
  const after = cursor === undefined ? undefined : decodeCursor(cursor);
  if (cursor !== undefined && !after) issues.push({ code: "custom", path: ["cursor"], message: "is not a cursor this API returned" });
  if (issues.length > 0) throw validationFailed(issues);
  return { status, name, parentId, createdAfter, createdBefore, idPrefix, limit, after };
}
