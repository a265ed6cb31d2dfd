/** Map item rows kept in memory: what the machine's tests give a transition, instead of the object's SQLite. */
import { needsUndo, type MapItemRow, type MapItemRows, type PendingItems } from "./item-rows";

export class MemoryItemRows implements MapItemRows {
  readonly rows = new Map<string, MapItemRow>();

  /** Stores a transition's item writes, as the object's store does when it commits. */
  apply(result: { itemRows?: readonly MapItemRow[]; pendingItems?: readonly PendingItems[] }): void {
    for (const range of result.pendingItems ?? []) {
      for (let index = 0; index < range.total; index++) {
        const attempt = this.get(range.stepId, index)?.attempt ?? 0;
        this.rows.set(`${range.stepId}#${index}`, { stepId: range.stepId, index, status: "pending", attempt });
      }
    }
    for (const row of result.itemRows ?? []) this.rows.set(`${row.stepId}#${row.index}`, row);
  }

  get(stepId: string, index: number): MapItemRow | undefined {
    return this.rows.get(`${stepId}#${index}`);
  }

  outputs(stepId: string, total: number): unknown[] {
    return Array.from({ length: total }, (_, index) => {
      const row = this.get(stepId, index);
      return row?.status === "succeeded" ? (row.output ?? null) : null;
    });
  }

  notSucceeded(stepId: string, total: number): number[] {
    return Array.from({ length: total }, (_, index) => index).filter((index) => this.get(stepId, index)?.status !== "succeeded");
  }

  toUndo(stepId: string, limit: number): number[] {
    return [...this.rows.values()]
      .filter((row) => row.stepId === stepId && needsUndo(row))
      .sort((a, b) => (b.endedSeq ?? 0) - (a.endedSeq ?? 0))
      .slice(0, limit)
      .map((row) => row.index);
  }
}
