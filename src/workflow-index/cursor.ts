import { decodePagePosition, encodePagePosition } from "../domain/page-cursor";
import type { ListPosition } from "./d1-index";

/**
 * List cursors (see page-cursor.ts). The position is on the sort key every index shard shares, so one cursor resumes
 * all of a tenant's shards at once.
 */
export function encodeCursor(position: ListPosition): string {
  return encodePagePosition([position.createdAt, position.id]);
}

export function decodeCursor(cursor: string): ListPosition | undefined {
  const position = decodePagePosition(cursor);
  return position && position[1].length <= 128 ? { createdAt: position[0], id: position[1] } : undefined;
}
