import { z } from "zod";
import { fromBase64Url, toBase64Url } from "../domain/security/base64url";

/** Where a page of dead letters ended, on their sort key (newest first, then by message id). */
export interface DeadLetterPosition {
  firstSeenAt: number;
  messageId: string;
}

const PositionSchema = z.tuple([z.int().min(0), z.string().min(1).max(256)]);

/**
 * Opaque to clients (base64url JSON of the last row's position), like the workflow list's. It carries no tenant: the
 * query is always the caller's, so a crafted cursor can only skip dead letters, never reveal another tenant's.
 */
export function encodeDeadLetterCursor(position: DeadLetterPosition): string {
  return toBase64Url(new TextEncoder().encode(JSON.stringify([position.firstSeenAt, position.messageId])));
}

export function decodeDeadLetterCursor(cursor: string): DeadLetterPosition | undefined {
  const bytes = fromBase64Url(cursor);
  if (!bytes) return undefined;
  try {
    const parsed = PositionSchema.safeParse(JSON.parse(new TextDecoder().decode(bytes)));
    return parsed.success ? { firstSeenAt: parsed.data[0], messageId: parsed.data[1] } : undefined;
  } catch {
    return undefined;
  }
}
