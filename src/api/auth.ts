import type { MiddlewareHandler } from "hono";
import { parseApiTokens } from "../domain/security/api-tokens";
import type { AppEnv } from "./app-env";
import { ApiError } from "./errors";

interface TokenDigest {
  tenant: string;
  digest: ArrayBuffer;
}

type LoadedTokens = { ok: true; digests: TokenDigest[] } | { ok: false; problem: string };

const CHALLENGE = { "WWW-Authenticate": 'Bearer realm="shepherd"' };

let cache: { raw: string | undefined; loaded: Promise<LoadedTokens> } | undefined;

function sha256(text: string): Promise<ArrayBuffer> {
  return crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
}

async function digestTokens(raw: string | undefined): Promise<LoadedTokens> {
  const parsed = parseApiTokens(raw);
  if (!parsed.ok) return parsed;
  const digests = await Promise.all(parsed.entries.map(async ({ tenant, token }) => ({ tenant, digest: await sha256(token) })));
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
async function tenantOf(presented: string, digests: TokenDigest[]): Promise<string | undefined> {
  const digest = await sha256(presented);
  let tenant: string | undefined;
  for (const entry of digests) {
    if (crypto.subtle.timingSafeEqual(digest, entry.digest)) tenant = entry.tenant;
  }
  return tenant;
}

/** Bearer authentication for `/v1/*`: the token decides the tenant every route then acts for. */
export const requireApiToken: MiddlewareHandler<AppEnv> = async (c, next) => {
  const loaded = await loadTokens(c.env.API_TOKENS);
  if (!loaded.ok) throw new ApiError(503, "not_configured", `${loaded.problem}; fix the API_TOKENS secret.`);
  if (loaded.digests.length === 0) {
    throw new ApiError(
      401,
      "unauthorized",
      'This deployment has no API tokens: set them with `wrangler secret put API_TOKENS` as comma-separated "tenant:token" pairs.',
      undefined,
      CHALLENGE,
    );
  }
  const match = /^Bearer[ ]+(\S+)[ ]*$/i.exec(c.req.header("Authorization") ?? "");
  if (!match?.[1]) {
    throw new ApiError(401, "unauthorized", "Send an API token as `Authorization: Bearer <token>`.", undefined, CHALLENGE);
  }
  const tenant = await tenantOf(match[1], loaded.digests);
  if (tenant === undefined) throw new ApiError(401, "unauthorized", "The API token is not valid.", undefined, CHALLENGE);
  c.set("tenant", tenant);
  await next();
};
