/**
 * API tokens come from one setting, `API_TOKENS`: comma-separated `tenant:token` pairs. A tenant may have
 * several tokens (for rotation); a token belongs to exactly one tenant.
 */

/** Tenant names end up in object names (`tenant:workflowId`), so they never contain a colon. */
export const TENANT_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

export interface ApiTokenEntry {
  tenant: string;
  token: string;
}

export type ParsedApiTokens = { ok: true; entries: ApiTokenEntry[] } | { ok: false; problem: string };

/** Parses the setting; a malformed entry makes the whole setting invalid, so a typo fails closed. */
export function parseApiTokens(raw: string | undefined): ParsedApiTokens {
  const pairs = (raw ?? "")
    .split(",")
    .map((pair) => pair.trim())
    .filter((pair) => pair.length > 0);
  const entries: ApiTokenEntry[] = [];
  const seen = new Set<string>();
  for (const [index, pair] of pairs.entries()) {
    const colon = pair.indexOf(":");
    const tenant = colon === -1 ? "" : pair.slice(0, colon).trim();
    const token = colon === -1 ? "" : pair.slice(colon + 1).trim();
    // Problems name the entry's position, never its token.
    if (!TENANT_PATTERN.test(tenant) || token.length === 0) {
      return { ok: false, problem: `API_TOKENS entry ${index + 1} is not a "tenant:token" pair with a tenant matching ${TENANT_PATTERN.source}` };
    }
    if (/\s/.test(token)) return { ok: false, problem: `API_TOKENS entry ${index + 1} has whitespace in its token` };
    if (seen.has(token)) return { ok: false, problem: `API_TOKENS entry ${index + 1} repeats a token of an earlier entry` };
    seen.add(token);
    entries.push({ tenant, token });
  }
  return { ok: true, entries };
}
