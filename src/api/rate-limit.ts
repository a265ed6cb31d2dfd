import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "./app-env";
import { ApiError } from "./errors";

/** The binding's window (wrangler.toml `period`): a limited caller may try again after it. */
const RETRY_AFTER_SECONDS = 10;

/**
 * Per-tenant limit on writes: one tenant starting workflows in a loop must not starve the others. Keyed by
 * tenant, so another tenant is unaffected. Runs after authentication; reads and task callbacks are not limited.
 */
export const limitTenantWrites: MiddlewareHandler<AppEnv> = async (c, next) => {
  const limiter = c.env.TENANT_WRITE_LIMIT;
  if ((c.req.method === "POST" || c.req.method === "PUT") && limiter) {
    const { success } = await limiter.limit({ key: c.get("tenant") });
    if (!success) {
      throw new ApiError(429, "rate_limited", `Too many writes for this tenant; retry after ${RETRY_AFTER_SECONDS} seconds.`, undefined, {
        "Retry-After": String(RETRY_AFTER_SECONDS),
      });
    }
  }
  await next();
};
