import type { Context, MiddlewareHandler } from "hono";
import { bearerAuth } from "hono/bearer-auth";
import { parseApiTokens } from "../domain/security/api-tokens";
import type { AppEnv } from "./app-env";
import { ApiError, errorBody } from "./errors";

interface TokenDigest {
  tenant: string;
  name: string;
  digest: ArrayBuffer;
}

type LoadedTokens = { ok: true; digests: TokenDigest[] } | { ok: false; problem: string };

let cache: { raw: string | undefined; loaded: Promise<LoadedTokens> } | undefined;

function sha256(text: string): Promise<ArrayBuffer> {
  return crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
}

async function digestTokens(raw: string | undefined): Promise<LoadedTokens> {
  const parsed = parseApiTokens(raw);
  if (!parsed.ok) return parsed;
  const digests = await Promise.all(parsed.entries.map(async ({ tenant, name, token }) => ({ tenant, name, digest: await sha256(token) })));
  return { ok: true, digests };
}

function loadTokens(raw: string | undefined): Promise<LoadedTokens> {
  if (cache && cache.raw === raw) return cache.loaded;
  const loaded = digestTokens(raw);
  cache = { raw, loaded };
  return loaded;
}

/**
 * Compares digests, not tokens, so every comparison takes the same time whatever the token's length, and
 * checks every configured token so the time does not say which one (or whether any) came close.
 */
async function entryOf(presented: string, digests: TokenDigest[]): Promise<TokenDigest | undefined> {
  const digest = await sha256(presented);
  let found: TokenDigest | undefined;
  for (const entry of digests) {
    if (crypto.subtle.timingSafeEqual(digest, entry.digest)) found = entry;
  }
  return found;
}

/** Every refusal is a 401 in the contract's error shape; hono adds the `WWW-Authenticate` challenge. */
const unauthorized = (message: string) => ({ message: (c: Context) => c.json(errorBody("unauthorized", message), 401) });

/**
 * Hono's bearer-auth reads the header (a malformed one is refused like a missing one: 401, not its 400) and
 * asks `verifyToken`, which finds the entry and puts its tenant and name in the context.
 */
const bearer = bearerAuth<AppEnv>({
  realm: "shepherd",
  noAuthenticationHeader: unauthorized("Send an API token as `Authorization: Bearer <token>`."),
  invalidAuthenticationHeader: unauthorized("Send an API token as `Authorization: Bearer <token>`."),
  invalidToken: unauthorized("The API token is not valid."),
  verifyToken: async (token, c) => {
    const loaded = await loadTokens(c.env.API_TOKENS);
    const entry = loaded.ok ? await entryOf(token, loaded.digests) : undefined;
    if (!entry) return false;
    c.set("tenant", entry.tenant);
    c.set("actor", entry.name);
    return true;
  },
});

/**
 * Bearer authentication for `/v1/*`: the token decides the tenant every route then acts for, and names who
 * acts (`actor`), which operator actions record in the history.
 */
export const requireApiToken: MiddlewareHandler<AppEnv> = async (c, next) => {
  const loaded = await loadTokens(c.env.API_TOKENS);
  if (!loaded.ok) throw new ApiError(503, "not_configured", `${loaded.problem}; fix the API_TOKENS secret.`);
  if (loaded.digests.length === 0) {
    throw new ApiError(
      401,
      "unauthorized",
      'This deployment has no API tokens: set them with `wrangler secret put API_TOKENS` as comma-separated "tenant:token" (or "tenant:name:token") entries.',
      undefined,
      { "WWW-Authenticate": 'Bearer realm="shepherd"' },
    );
  }
  return bearer(c, next);
};
