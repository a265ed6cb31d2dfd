/**
 * A map's items, one row each in the object's own storage: what each item became (status, output, error), so a
 * map of 10 000 items never sits in the workflow's state. The machine reads them through `MapItemRows` (the
 * object's SQLite is synchronous) and writes them as part of its result, like the rest of a transition's state.
 */
import { MAP_ITEM_STATUSES } from "../../contract";
import type { StepError } from "../state";

export { MAP_ITEM_STATUSES };
export type MapItemStatus = (typeof MAP_ITEM_STATUSES)[number];

export interface MapItemRow {
  stepId: string;
  index: number;
  status: MapItemStatus;
  /** Its latest attempt's number (0: never started). */
  attempt: number;
  output?: unknown;
  error?: StepError;
  /** When it ended, in its map's own order: compensation undoes the newest first. */
  endedSeq?: number;
  /** Stopped while an attempt of it had started: its effect may have happened, so compensation covers it. */
  mayHaveEffect?: boolean;
}

/** Every item of a map from 0 to `total`, pending: written once, when the map starts. */
export interface PendingItems {
  stepId: string;
  total: number;
}

/** What the machine reads of the rows. A missing row reads as a pending item. */
export interface MapItemRows {
  get(stepId: string, index: number): MapItemRow | undefined;
  /** Each item's output in item order (null for an item without one). */
  outputs(stepId: string, total: number): unknown[];
  /** The items (of `total`) that did not succeed, in item order. */
  notSucceeded(stepId: string, total: number): number[];
  /** Up to `limit` items to undo, newest first: succeeded, or stopped when their effect may have happened. */
  toUndo(stepId: string, limit: number): number[];
}

/** Rows that undo walks: a succeeded item, or one stopped mid-attempt. */
export function needsUndo(row: MapItemRow): boolean {
  return row.status === "succeeded" || (row.status === "cancelled" && row.mayHaveEffect === true);
}

/** No rows at all: a workflow that never ran a map (and a start, before anything is stored). */
export const NO_ITEM_ROWS: MapItemRows = {
  get: () => undefined,
  outputs: (_stepId, total) => Array.from({ length: total }, () => null),
  notSucceeded: (_stepId, total) => Array.from({ length: total }, (_, index) => index),
  toUndo: () => [],
};

/**
 * The rows as this transition sees them: what storage holds, with the transition's own writes on top (they are
 * stored only when it commits).
 */
export class ItemRowsOverlay implements MapItemRows {
  private readonly written = new Map<string, MapItemRow>();
  readonly pending: PendingItems[] = [];

  constructor(private readonly stored: MapItemRows) {}

  write(row: MapItemRow): void {
    this.written.set(keyOf(row.stepId, row.index), row);
  }

  /** Rows to store, in the order they were last written. */
  writes(): MapItemRow[] {
    return [...this.written.values()];
  }

  get(stepId: string, index: number): MapItemRow | undefined {
    return this.written.get(keyOf(stepId, index)) ?? this.stored.get(stepId, index);
  }

  outputs(stepId: string, total: number): unknown[] {
    const outputs = this.stored.outputs(stepId, total);
    for (const row of this.ownRows(stepId)) if (row.index < total) outputs[row.index] = row.status === "succeeded" ? (row.output ?? null) : null;
    return outputs;
  }

  notSucceeded(stepId: string, total: number): number[] {
    const indices = new Set(this.stored.notSucceeded(stepId, total));
    for (const row of this.ownRows(stepId)) {
      if (row.status === "succeeded") indices.delete(row.index);
      else if (row.index < total) indices.add(row.index);
    }
    return [...indices].sort((a, b) => a - b);
  }

  toUndo(stepId: string, limit: number): number[] {
    const own = this.ownRows(stepId);
    // Rows this transition rewrote may no longer need undoing: ask for enough to make up for them.
    const candidates = this.stored.toUndo(stepId, limit + own.length).filter((index) => !this.written.has(keyOf(stepId, index)));
    const fresh = own.filter(needsUndo).sort((a, b) => (b.endedSeq ?? 0) - (a.endedSeq ?? 0)).map((row) => row.index);
    return [...fresh, ...candidates].slice(0, limit);
  }

  private ownRows(stepId: string): MapItemRow[] {
    return [...this.written.values()].filter((row) => row.stepId === stepId);
  }
}

function keyOf(stepId: string, index: number): string {
  return `${stepId}#${index}`;
}
