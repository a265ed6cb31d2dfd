import { Hono } from "hono";
import { devHooksEnabled } from "../dev/faults";
import { ID_PATTERN } from "../domain/contract";
import { schedulerFor } from "../workflow/client";
import { requireApiToken } from "./auth";
import { backPressureNow } from "../admission/back-pressure-now";
import type { AppEnv } from "./app-env";
import { ApiError, noSuchWorkflow, workflowRejectionToError } from "./errors";

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
    if (!ID_PATTERN.test(id)) throw noSuchWorkflow(id);
    const inspected = await schedulerFor(c.env, c.get("tenant"), id).inspect();
    if ("ok" in inspected) throw workflowRejectionToError(id, inspected);
    return c.json(inspected);
  })
  // Puts the body, as sent, on the STARTS queue, as another Worker's producer binding would: to try the queue locally,
  // a message that cannot start included (its dead letter shows in GET /v1/starts/dead-letters).
  .post("/dev/starts", async (c) => {
    let body: unknown;
    try {
      body = await c.req.json();
    } catch {
      throw new ApiError(400, "invalid_json", "The request body is not valid JSON.");
    }
    await c.env.STARTS.send(body);
    return c.json({ queued: true }, 202);
  })
  // What back-pressure at the front door sees: the task queue's lag as the consumers last reported it, and whose
  // deliveries filled it (admission refuses only those at or past their fair share).
  .get("/dev/dispatch", async (c) => {
    const { sample, deliveries, boundMs, verdict } = await backPressureNow(c.env);
    return c.json({ lagMs: sample?.lagMs ?? null, reportedAt: sample?.at ?? null, boundMs, backPressure: verdict.overloaded, deliveries });
  });
