/** The STARTS queue's dead letters in D1: the only module that speaks SQL to the `start_dead_letters` table. */
import { z } from "zod";
import type { DeadLetterPosition } from "./dead-letter-cursor";
import { storedBody, storedError, type DeadLetterRecord, type DeadLetterView } from "./dead-letter";
import { namedTenant, namedWorkflowId } from "./start-message";

/** The owner of the dead letters of messages that named no tenant the deployment knows (see deadLetterViewer in tenants.ts). */
export const NO_TENANT = "";

/** A dead letter is kept this long; older ones go as new ones of their tenant are recorded. */
export const DEAD_LETTER_RETENTION_MS = 30 * 24 * 60 * 60 * 1000;

/**
 * Records the dead letter, or updates it when its message was recorded before (delivered again before the ack
 * landed, or given up on by the queue after all), and deletes its tenant's dead letters past the retention.
 */
export async function recordDeadLetter(db: D1Database, record: DeadLetterRecord): Promise<void> {
  const tenant = record.tenant ?? NO_TENANT;
  const body = storedBody(record.body);
  const error = storedError(record.error);
  await db.batch([
    db
      .prepare(
        `INSERT INTO start_dead_letters (tenant, message_id, named_tenant, workflow_id, error_code, error_message, error_details_json, body,
           body_truncated, attempts, first_seen_at, last_seen_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?11)
         ON CONFLICT (tenant, message_id) DO UPDATE SET error_code = excluded.error_code, error_message = excluded.error_message,
           error_details_json = excluded.error_details_json, attempts = MAX(attempts, excluded.attempts), last_seen_at = excluded.last_seen_at`,
      )
      .bind(
        tenant,
        record.messageId,
        namedTenant(record.body) ?? null,
        namedWorkflowId(record.body) ?? null,
        error.code,
        error.message,
        error.details ? JSON.stringify(error.details) : null,
        body.text,
        body.truncated ? 1 : 0,
        record.attempts,
        record.at,
      ),
    db.prepare("DELETE FROM start_dead_letters WHERE tenant = ? AND first_seen_at < ?").bind(tenant, record.at - DEAD_LETTER_RETENTION_MS),
  ]);
}

const RowSchema = z.object({
  message_id: z.string(),
  named_tenant: z.string().nullable(),
  workflow_id: z.string().nullable(),
  error_code: z.string(),
  error_message: z.string(),
  error_details_json: z.string().nullable(),
  body: z.string(),
  body_truncated: z.number(),
  attempts: z.number(),
  first_seen_at: z.number(),
  last_seen_at: z.number(),
});

/** A page of the dead letters these owners (a tenant, and the unowned ones when it sees them), newest first. */
export async function listDeadLetters(
  db: D1Database,
  owners: string[],
  limit: number,
  after?: DeadLetterPosition,
): Promise<{ deadLetters: DeadLetterView[]; next?: DeadLetterPosition }> {
  const afterSql = after ? "AND (first_seen_at < ? OR (first_seen_at = ? AND message_id < ?))" : "";
  const { results } = await db
    .prepare(
      `SELECT message_id, named_tenant, workflow_id, error_code, error_message, error_details_json, body, body_truncated, attempts, first_seen_at,
         last_seen_at FROM start_dead_letters WHERE tenant IN (${owners.map(() => "?").join(", ")}) ${afterSql}
       ORDER BY first_seen_at DESC, message_id DESC LIMIT ?`,
    )
    .bind(...owners, ...(after ? [after.firstSeenAt, after.firstSeenAt, after.messageId] : []), limit + 1)
    .all();
  // One more than asked says whether another page follows.
  const deadLetters = results.slice(0, limit).map((row) => viewOf(RowSchema.parse(row)));
  const last = deadLetters.at(-1);
  return { deadLetters, ...(results.length > limit && last ? { next: { firstSeenAt: last.firstSeenAt, messageId: last.messageId } } : {}) };
}

function viewOf(row: z.infer<typeof RowSchema>): DeadLetterView {
  const details = row.error_details_json === null ? undefined : (JSON.parse(row.error_details_json) as unknown[]);
  return {
    messageId: row.message_id,
    tenant: row.named_tenant,
    workflowId: row.workflow_id,
    error: { code: row.error_code, message: row.error_message, ...(details ? { details } : {}) },
    body: row.body,
    bodyTruncated: row.body_truncated === 1,
    attempts: row.attempts,
    firstSeenAt: row.first_seen_at,
    lastSeenAt: row.last_seen_at,
  };
}
