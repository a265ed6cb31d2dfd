/**
 * API tokens come from one setting, `API_TOKENS`: comma-separated entries, each `tenant:token` or
 * `tenant:name:token`. A tenant may have several tokens (for rotation, or one per person or system); a token
 * belongs to exactly one tenant. The name says who acts with the token: the history records it with every
 * operator action; a token without one acts under its tenant's name.
 */

/** Tenant names end up in object names (`tenant:workflowId`), so they never contain a colon. */
export const TENANT_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

/**
 * A token's name: no colon either, so it is never mistaken for the service's own actors (`schedule:<id>`,
 * `workflow:<id>`, see `ActedBy`) and an entry splits one way only; `@` so an e-mail address can be one.
 */
export const TOKEN_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.@-]{0,63}$/;

/**
 * What `Authorization: Bearer` can carry (RFC 6750's b64token, hono's bearer-auth helper checks it): a token
 * with any other character could never be presented, so the setting refuses it rather than keep a dead entry.
 */
const BEARER_TOKEN_PATTERN = /^[A-Za-z0-9._~+/-]+=*$/;

export interface ApiTokenEntry {
  tenant: string;
  /** Who acts with it, as the history records them: the entry's name, or the tenant's. */
  name: string;
  token: string;
}

export type ParsedApiTokens = { ok: true; entries: ApiTokenEntry[] } | { ok: false; problem: string };

/** Parses the setting; a malformed entry makes the whole setting invalid, so a typo fails closed. */
export function parseApiTokens(raw: string | undefined): ParsedApiTokens {
  const texts = (raw ?? "")
    .split(",")
    .map((text) => text.trim())
    .filter((text) => text.length > 0);
  const entries: ApiTokenEntry[] = [];
  const seen = new Set<string>();
  for (const [index, text] of texts.entries()) {
    const parsed = parseEntry(text, index + 1);
    if (typeof parsed === "string") return { ok: false, problem: parsed };
    if (seen.has(parsed.token)) return { ok: false, problem: `API_TOKENS entry ${index + 1} repeats a token of an earlier entry` };
    seen.add(parsed.token);
    entries.push(parsed);
  }
  return { ok: true, entries };
}

/** One entry, or the problem with it; a problem names the entry's position, never its token. */
function parseEntry(text: string, position: number): ApiTokenEntry | string {
  const parts = text.split(":").map((part) => part.trim());
  if (parts.length < 2 || parts.length > 3) return `API_TOKENS entry ${position} is not a "tenant:token" or "tenant:name:token" entry`;
  const tenant = parts[0] ?? "";
  const token = parts[parts.length - 1] ?? "";
  const name = parts.length === 3 ? (parts[1] ?? "") : tenant;
  if (!TENANT_PATTERN.test(tenant)) return `API_TOKENS entry ${position} has a tenant that does not match ${TENANT_PATTERN.source}`;
  if (!TOKEN_NAME_PATTERN.test(name)) return `API_TOKENS entry ${position} has a name that does not match ${TOKEN_NAME_PATTERN.source}`;
  if (token.length === 0) return `API_TOKENS entry ${position} has no token`;
  if (!BEARER_TOKEN_PATTERN.test(token)) {
    return `API_TOKENS entry ${position} has a token with a character a bearer token cannot carry (letters, digits and -._~+/ then any =)`;
  }
  return { tenant, name, token };
}
