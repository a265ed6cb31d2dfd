import { MAP_ITEM_STATUSES, type MapItemRow, type MapItemRows, type MapItemStatus, type PendingItems } from "../domain/machine";

type Query = <T extends Record<string, SqlStorageValue>>(statement: string, ...bindings: unknown[]) => { toArray(): T[] };
type ItemRecord = { idx: number; status: string; attempt: number; ended_seq: number | null; effect: number; output_json: string | null; error_json: string | null };

/** One page of a map's items, as `GET …/steps/{stepId}/items` answers it. */
export interface ItemPage {
  items: { index: number; status: MapItemStatus; attempt: number; output?: unknown; error?: unknown }[];
  nextCursor?: string;
}

/**
 * The rows of the workflow's map items, for the store (statements through its `query`, inside its transaction)
 * and for the machine, which reads them through `MapItemRows`. A map's every item has a row from its start on.
 */
export class ItemRowsSql implements MapItemRows {
  constructor(private readonly query: Query) {}

  /** A transition's writes: each started map's pending rows in one statement, then the rows it changed. */
  write(pending: readonly PendingItems[], rows: readonly MapItemRow[]): void {
    for (const { stepId, total } of pending) {
      if (total === 0) continue;
      this.query(
        // A map run again from the start (a redrive from it) resets its rows but keeps their attempt numbers, so a
        // report from before is still refused as stale.
        `WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i + 1 < ?)
         INSERT INTO map_items (step_id, idx, status, attempt, effect) SELECT ?, i, 'pending', 0, 0 FROM n WHERE true
         ON CONFLICT (step_id, idx) DO UPDATE SET status = 'pending', ended_seq = NULL, effect = 0, output_json = NULL, error_json = NULL`,
        total, stepId,
      );
    }
    for (const row of rows) {
      this.query(
        `INSERT INTO map_items (step_id, idx, status, attempt, ended_seq, effect, output_json, error_json) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (step_id, idx) DO UPDATE SET status = excluded.status, attempt = excluded.attempt, ended_seq = excluded.ended_seq,
           effect = excluded.effect, output_json = excluded.output_json, error_json = excluded.error_json`,
        row.stepId, row.index, row.status, row.attempt, row.endedSeq ?? null, row.mayHaveEffect ? 1 : 0,
        row.output === undefined ? null : JSON.stringify(row.output), row.error === undefined ? null : JSON.stringify(row.error),
      );
    }
  }

  get(stepId: string, index: number): MapItemRow | undefined {
    const [record] = this.query<ItemRecord>(`SELECT ${COLUMNS} FROM map_items WHERE step_id = ? AND idx = ?`, stepId, index).toArray();
    return record && rowOf(stepId, record);
  }

  outputs(stepId: string, total: number): unknown[] {
    const outputs: unknown[] = Array.from({ length: total }, () => null);
    const records = this.query<{ idx: number; output_json: string | null }>(
      "SELECT idx, output_json FROM map_items WHERE step_id = ? AND status = 'succeeded' AND idx < ?", stepId, total,
    ).toArray();
    for (const record of records) outputs[record.idx] = record.output_json === null ? null : JSON.parse(record.output_json);
    return outputs;
  }

  notSucceeded(stepId: string, total: number): number[] {
    return this.query<{ idx: number }>("SELECT idx FROM map_items WHERE step_id = ? AND status != 'succeeded' AND idx < ? ORDER BY idx", stepId, total)
      .toArray()
      .map((record) => record.idx);
  }

  toUndo(stepId: string, limit: number): number[] {
    return this.query<{ idx: number }>(
      "SELECT idx FROM map_items WHERE step_id = ? AND (status = 'succeeded' OR (status = 'cancelled' AND effect = 1)) ORDER BY ended_seq DESC LIMIT ?",
      stepId, limit,
    )
      .toArray()
      .map((record) => record.idx);
  }

  /** A page of items in item order, from `cursor` (an index), of one status or all. */
  page(stepId: string, options: { status?: MapItemStatus; cursor?: number; limit: number }): ItemPage {
    const { status, cursor = 0, limit } = options;
    const records = this.query<ItemRecord>(
      `SELECT ${COLUMNS} FROM map_items WHERE step_id = ? AND idx >= ? ${status ? "AND status = ?" : ""} ORDER BY idx LIMIT ?`,
      ...[stepId, cursor, ...(status ? [status] : []), limit + 1],
    ).toArray();
    const items = records.slice(0, limit).map((record) => {
      const row = rowOf(stepId, record);
      return { index: row.index, status: row.status, attempt: row.attempt, ...(row.output === undefined ? {} : { output: row.output }), ...(row.error ? { error: row.error } : {}) };
    });
    const next = records[limit];
    return { items, ...(next ? { nextCursor: String(next.idx) } : {}) };
  }
}

const COLUMNS = "idx, status, attempt, ended_seq, effect, output_json, error_json";

function rowOf(stepId: string, record: ItemRecord): MapItemRow {
  const status = (MAP_ITEM_STATUSES as readonly string[]).includes(record.status) ? (record.status as MapItemStatus) : "pending";
  return {
    stepId,
    index: record.idx,
    status,
    attempt: record.attempt,
    ...(record.ended_seq === null ? {} : { endedSeq: record.ended_seq }),
    ...(record.effect === 1 ? { mayHaveEffect: true } : {}),
    ...(record.output_json === null ? {} : { output: JSON.parse(record.output_json) as unknown }),
    ...(record.error_json === null ? {} : { error: JSON.parse(record.error_json) as MapItemRow["error"] }),
  };
}
