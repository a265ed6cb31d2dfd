import { fromBase64Url, toBase64Url } from "../domain/security/base64url";
import { ID_PATTERN } from "../domain/contract";

/**
 * The definitions list's cursor: opaque to clients (base64url of the last name on the page). Like the workflow
 * list's, it carries no tenant: the query is always the caller's, so a crafted cursor can only skip names.
 */
export function encodeNameCursor(name: string): string {
  return toBase64Url(new TextEncoder().encode(name));
}

export function decodeNameCursor(cursor: string): string | undefined {
  const bytes = fromBase64Url(cursor);
  if (!bytes) return undefined;
  const name = new TextDecoder().decode(bytes);
  return ID_PATTERN.test(name) ? name : undefined;
}
