import { z } from "zod";
import { fromBase64Url, toBase64Url } from "../domain/security/base64url";
import type { ListPosition } from "./d1-index";

/**
 * List cursors are opaque to clients (base64url JSON of the last row's position). The position is on the sort key
 * every index shard shares, so one cursor resumes all of a tenant's shards at once. They carry no tenant:
 * the query is always scoped to the caller's tenant, so a crafted cursor can only skip rows, never reveal any.
 */
const PositionSchema = z.tuple([z.int().min(0), z.string().min(1).max(128)]);

export function encodeCursor(position: ListPosition): string {
  return toBase64Url(new TextEncoder().encode(JSON.stringify([position.createdAt, position.id])));
}

export function decodeCursor(cursor: string): ListPosition | undefined {
  const bytes = fromBase64Url(cursor);
  if (!bytes) return undefined;
  try {
    const parsed = PositionSchema.safeParse(JSON.parse(new TextDecoder().decode(bytes)));
    return parsed.success ? { createdAt: parsed.data[0], id: parsed.data[1] } : undefined;
  } catch {
    return undefined;
  }
}
