import { Hono } from "hono";
import { devHooksEnabled } from "../dev/faults";
import { ID_PATTERN } from "../domain/schemas";
import { schedulerFor } from "../scheduler/stub";
import { requireApiToken } from "./auth";
import type { AppEnv } from "./context";
import { ApiError, rejectionToError } from "./errors";

/**
 * Routes for local development, the chaos soak and the benchmarks; not part of the contract or the
 * OpenAPI document. They answer 404 unless the deployment sets DEV_HOOKS=true, which wrangler.toml never does.
 */
export const devRoutes = new Hono<AppEnv>()
  .use("/dev/*", async (c, next) => {
    if (!devHooksEnabled(c.env)) throw new ApiError(404, "not_found", `No route for ${c.req.method} ${c.req.path}.`);
    await requireApiToken(c, next);
  })
  .get("/dev/workflows/:id", async (c) => {
    const id = c.req.param("id");
    if (!ID_PATTERN.test(id)) throw new ApiError(404, "not_found", `No workflow "${id}".`);
    const inspected = await schedulerFor(c.env, c.get("tenant"), id).inspect();
    if ("ok" in inspected) throw rejectionToError(inspected);
    return c.json(inspected);
  });
