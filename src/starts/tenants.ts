/**
 * Which tenants a start message may name (those of API_TOKENS, the tenants the front door knows), and which tenant
 * sees the dead letters of messages that named none of them.
 */
import { parseApiTokens } from "../domain/security/api-tokens";

export type KnownTenants = { ok: true; tenants: ReadonlySet<string> } | { ok: false; problem: string };

let cache: { raw: string | undefined; known: KnownTenants } | undefined;

export function knownTenants(env: Pick<Env, "API_TOKENS">): KnownTenants {
  if (cache && cache.raw === env.API_TOKENS) return cache.known;
  const parsed = parseApiTokens(env.API_TOKENS);
  const known: KnownTenants = parsed.ok ? { ok: true, tenants: new Set(parsed.entries.map((entry) => entry.tenant)) } : parsed;
  cache = { raw: env.API_TOKENS, known };
  return known;
}

/**
 * The tenant shown the dead letters that belong to no tenant (a message naming none, or one this deployment does
 * not have): STARTS_DEAD_LETTER_TENANT, else the only tenant of a deployment with one. With several and no
 * setting they are shown to no one (the log has them), since a message meant for one tenant may hold its data.
 */
export function deadLetterViewer(env: Pick<Env, "API_TOKENS" | "STARTS_DEAD_LETTER_TENANT">): string | undefined {
  const named = env.STARTS_DEAD_LETTER_TENANT?.trim();
  if (named) return named;
  const known = knownTenants(env);
  if (!known.ok || known.tenants.size !== 1) return undefined;
  return [...known.tenants][0];
}
