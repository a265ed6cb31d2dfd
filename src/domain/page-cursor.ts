import { z } from "zod";
import { fromBase64Url, toBase64Url } from "./security/base64url";

/**
 * A list's cursor: opaque to clients (base64url JSON of the last row's sort key, a time and an id). It carries no
 * tenant: every query is scoped to the caller's, so a crafted cursor can only skip rows, never reveal any.
 */
export type PagePosition = [at: number, id: string];

const PositionSchema = z.tuple([z.int().min(0), z.string().min(1).max(256)]);

export function encodePagePosition(position: PagePosition): string {
  return toBase64Url(new TextEncoder().encode(JSON.stringify(position)));
}

/** The position a cursor names; undefined for anything that is not one of ours. */
export function decodePagePosition(cursor: string): PagePosition | undefined {
  const bytes = fromBase64Url(cursor);
  if (!bytes) return undefined;
  try {
    const parsed = PositionSchema.safeParse(JSON.parse(new TextDecoder().decode(bytes)));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}
