/**
 * The cross-workflow index in D1: the only module that speaks SQL to it. Each workflow's object is the
 * source of truth and writes here through its outbox; this table only serves listing and the sweep. Each
 * function reads or writes one shard's database: index-shards.ts says which.
 */
import type { IndexEntry, Triage } from "../domain/machine/index-entry";
import type { WorkflowStatus } from "../domain/machine/state";
import { METRICS_INSERT_COLUMNS, METRICS_PLACEHOLDERS, METRICS_UPDATES, metricsValues } from "./metrics-rows";
import { seriesDeltaStatement } from "./metrics-series";
import { SUMMARY_COLUMNS, SUMMARY_INSERT_COLUMNS, SUMMARY_PLACEHOLDERS, SUMMARY_UPDATES, summaryFields, summaryValues, type SummaryRow } from "./summary-rows";

export interface ListedWorkflow extends Partial<Triage> {
  id: string;
  name: string;
  status: WorkflowStatus;
  createdAt: number;
  updatedAt: number;
  endedAt?: number;
  /** The workflow whose step started it, for a child workflow. */
  parentId?: string;
  /** A delayed start's time. */
  startAt?: number;
}

/** Where the next page starts: just after this (createdAt, id), newest first. */
export interface ListPosition {
  createdAt: number;
  id: string;
}

export interface ListQuery {
  status?: WorkflowStatus | undefined;
  name?: string | undefined;
  /** Only the children of this workflow. */
  parentId?: string | undefined;
  /** Only workflows created in [createdAfter, createdBefore) (a bulk job's filter). */
  createdAfter?: number | undefined;
  createdBefore?: number | undefined;
  /** Only these workflows (a bulk job's filter). */
  ids?: readonly string[] | undefined;
  /** Only workflows whose id starts with this. */
  idPrefix?: string | undefined;
  limit: number;
  after?: ListPosition | undefined;
}

type ListedRow = SummaryRow & {
  id: string;
  name: string;
  status: WorkflowStatus;
  created_at: number;
  updated_at: number;
  ended_at: number | null;
  parent_id: string | null;
  start_at: number | null;
};

const LISTED_COLUMNS = ["id", "name", "status", "created_at", "updated_at", "ended_at", "parent_id", "start_at", ...SUMMARY_COLUMNS].join(", ");

/**
 * Past every id that starts with a prefix: ids are ASCII letters, digits and `_ . : -` (IdSchema), all below DEL, so
 * `prefix <= id < prefix + DEL` holds exactly for the ids that start with it, a range the primary key (tenant, id) reads.
 */
const PAST_ANY_ID_CHARACTER = "\x7f";

/**
 * Writes the entry unless the index already holds a newer version: late or repeated writes can't regress it. The
 * minute's series takes what the entry adds to the counters in the same batch, a transaction, so a write counts
 * in both or in neither (metrics-series.ts).
 */
export async function upsertIndexEntry(db: D1Database, entry: IndexEntry): Promise<void> {
  await db.batch([seriesDeltaStatement(db, entry), indexUpsertStatement(db, entry)]);
}

function indexUpsertStatement(db: D1Database, entry: IndexEntry): D1PreparedStatement {
  return db
    .prepare(
      `INSERT INTO workflows (tenant, id, name, status, created_at, updated_at, ended_at, next_deadline_at, version, parent_id, start_at, ${METRICS_INSERT_COLUMNS}, ${SUMMARY_INSERT_COLUMNS})
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ${METRICS_PLACEHOLDERS}, ${SUMMARY_PLACEHOLDERS})
       ON CONFLICT (tenant, id) DO UPDATE SET
         name = excluded.name, status = excluded.status, updated_at = excluded.updated_at,
         ended_at = excluded.ended_at, next_deadline_at = excluded.next_deadline_at, version = excluded.version, start_at = excluded.start_at,
         ${METRICS_UPDATES}, ${SUMMARY_UPDATES}
       WHERE excluded.version >= workflows.version`,
    )
    .bind(
      entry.tenant,
      entry.id,
      entry.name,
      entry.status,
      entry.createdAt,
      entry.updatedAt,
      entry.endedAt ?? null,
      entry.nextDeadlineAt ?? null,
      entry.version,
      entry.parentId ?? null,
      entry.startAt ?? null,
      ...metricsValues(entry.metrics),
      ...summaryValues(entry.triage),
    );
}

/**
 * Up to `limit + 1` of a tenant's workflows in one database, newest first, past `after`: one more row than a page
 * says whether another page follows (src/workflow-index/tenant-listing.ts merges the shards' rows).
 */
export async function listShardWorkflows(db: D1Database, tenant: string, query: ListQuery): Promise<ListedWorkflow[]> {
  const conditions = ["tenant = ?"];
  const params: (string | number)[] = [tenant];
  if (query.status !== undefined) {
    conditions.push("status = ?");
    params.push(query.status);
  }
  if (query.name !== undefined) {
    conditions.push("name = ?");
    params.push(query.name);
  }
  if (query.parentId !== undefined) {
    conditions.push("parent_id = ?");
    params.push(query.parentId);
  }
  if (query.createdAfter !== undefined) {
    conditions.push("created_at >= ?");
    params.push(query.createdAfter);
  }
  if (query.createdBefore !== undefined) {
    conditions.push("created_at < ?");
    params.push(query.createdBefore);
  }
  if (query.ids !== undefined) {
    // One bound JSON array, not a placeholder per id: D1 binds at most 100 parameters to a statement.
    conditions.push("id IN (SELECT value FROM json_each(?))");
    params.push(JSON.stringify(query.ids));
  }
  if (query.idPrefix !== undefined) {
    conditions.push("id >= ? AND id < ?");
    params.push(query.idPrefix, `${query.idPrefix}${PAST_ANY_ID_CHARACTER}`);
  }
  if (query.after !== undefined) {
    conditions.push("(created_at < ? OR (created_at = ? AND id < ?))");
    params.push(query.after.createdAt, query.after.createdAt, query.after.id);
  }
  const { results } = await db
    .prepare(
      `SELECT ${LISTED_COLUMNS} FROM workflows WHERE ${conditions.join(" AND ")}
       ORDER BY created_at DESC, id DESC LIMIT ?`,
    )
    .bind(...params, query.limit + 1)
    .all<ListedRow>();
  return results.map(listedWorkflowOf);
}

function listedWorkflowOf(row: ListedRow): ListedWorkflow {
  return {
    id: row.id,
    name: row.name,
    status: row.status,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    ...(row.ended_at === null ? {} : { endedAt: row.ended_at }),
    ...(row.parent_id === null ? {} : { parentId: row.parent_id }),
    ...(row.start_at === null ? {} : { startAt: row.start_at }),
    ...summaryFields(row),
  };
}

/** Workflows that have not ended and whose indexed deadline passed before `before`, most overdue first. */
export async function findOverdueWorkflows(db: D1Database, before: number, limit: number): Promise<{ tenant: string; id: string }[]> {
  const { results } = await db
    .prepare(
      `SELECT tenant, id FROM workflows
       WHERE status IN ('scheduled', 'running', 'paused', 'compensating', 'needs_attention') AND next_deadline_at < ?
       ORDER BY next_deadline_at LIMIT ?`,
    )
    .bind(before, limit)
    .all<{ tenant: string; id: string }>();
  return results;
}
