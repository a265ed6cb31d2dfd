import { decodePagePosition, encodePagePosition } from "../domain/page-cursor";

/** Where a page of dead letters ended, on their sort key (newest first, then by message id). */
export interface DeadLetterPosition {
  firstSeenAt: number;
  messageId: string;
}

/** A cursor over the dead letters, as the workflow list's (see page-cursor.ts). */
export function encodeDeadLetterCursor(position: DeadLetterPosition): string {
  return encodePagePosition([position.firstSeenAt, position.messageId]);
}

export function decodeDeadLetterCursor(cursor: string): DeadLetterPosition | undefined {
  const position = decodePagePosition(cursor);
  return position && { firstSeenAt: position[0], messageId: position[1] };
}
