/**
 * The list's triage in the D1 index (migration 0015): the columns the index upsert writes with each row, and the
 * fields a listed row reads back. An entry without a line writes nulls, which is how a line is cleared.
 */
import type { Triage } from "../domain/machine/index-entry";

/** The triage columns of `workflows`, in the order `summaryValues` gives their values. */
export const SUMMARY_COLUMNS = ["summary", "summary_step_id", "summary_attempts_used", "summary_attempts_max", "summary_deadline_at"] as const;

/** SQL fragments for the index upsert: the column list, its placeholders and the update of each on conflict. */
export const SUMMARY_INSERT_COLUMNS = SUMMARY_COLUMNS.join(", ");
export const SUMMARY_PLACEHOLDERS = SUMMARY_COLUMNS.map(() => "?").join(", ");
export const SUMMARY_UPDATES = SUMMARY_COLUMNS.map((column) => `${column} = excluded.${column}`).join(", ");

export function summaryValues(triage: Triage | undefined): (string | number | null)[] {
  return [triage?.summary ?? null, triage?.stepId ?? null, triage?.attempts?.used ?? null, triage?.attempts?.max ?? null, triage?.nextDeadlineAt ?? null];
}

export type SummaryRow = {
  summary: string | null;
  summary_step_id: string | null;
  summary_attempts_used: number | null;
  summary_attempts_max: number | null;
  summary_deadline_at: number | null;
};

/** A listed row's triage fields, absent where the row has none. */
export function summaryFields(row: SummaryRow): Partial<Triage> {
  return {
    ...(row.summary === null ? {} : { summary: row.summary }),
    ...(row.summary_step_id === null ? {} : { stepId: row.summary_step_id }),
    ...(row.summary_attempts_used === null || row.summary_attempts_max === null ? {} : { attempts: { used: row.summary_attempts_used, max: row.summary_attempts_max } }),
    ...(row.summary_deadline_at === null ? {} : { nextDeadlineAt: row.summary_deadline_at }),
  };
}
