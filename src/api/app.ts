import { OpenAPIHono } from "@hono/zod-openapi";
import { bodyLimit } from "hono/body-limit";
import { LIMITS } from "../domain/language/limits";
import { requireApiToken } from "./auth";
import { devRoutes } from "./dev-routes";
import { limitTenantWrites } from "./rate-limit";
import type { AppEnv } from "./app-env";
import { ApiError, errorBody, onApiError, validationFailed } from "./errors";
import { diagnosisRoutes } from "./diagnosis";
import { definitionRoutes } from "./definitions";
import { dashboardPage, wantsHtml } from "./dashboard";
import { docsRoutes } from "./docs";
import { eventRoutes } from "./events";
import { operatorCommandRoutes } from "./operator-commands";
import { metricsRoutes } from "./metrics";
import { metricsSeriesRoutes } from "./metrics-series";
import { scheduleRoutes } from "./schedules";
import { targetRoutes } from "./targets";
import { taskRoutes } from "./tasks";
import { webhookRoutes } from "./webhooks";
import { workflowRoutes } from "./workflows";
import { workflowBatchRoutes } from "./workflow-batch";
import { mapItemRoutes } from "./map-items";
import { attemptRoutes } from "./attempts";
import { poolRoutes } from "./pools";
import { startRoutes } from "./starts";
import { workflowResultRoutes } from "./workflow-result";
import { bulkRoutes } from "./bulk";

type RoutesOf<T> = T extends OpenAPIHono<AppEnv, infer S> ? S : never;

/**
 * Every route's request and response types, for the typed client (src/client): `createApp` mounts the modules at
 * "/" in statements, which keep no types, so they are gathered here. Types only: nothing of it runs. The operator
 * commands' routes are not among them: the client makes its methods from the commands' table, as the routes are.
 */
export type ApiRoutes = OpenAPIHono<
  AppEnv,
  RoutesOf<typeof workflowRoutes> &
    RoutesOf<typeof workflowResultRoutes> &
    RoutesOf<typeof workflowBatchRoutes> &
    RoutesOf<typeof eventRoutes> &
    RoutesOf<typeof diagnosisRoutes> &
    RoutesOf<typeof mapItemRoutes> &
    RoutesOf<typeof attemptRoutes> &
    RoutesOf<typeof definitionRoutes> &
    RoutesOf<typeof scheduleRoutes> &
    RoutesOf<typeof targetRoutes> &
    RoutesOf<typeof webhookRoutes> &
    RoutesOf<typeof metricsRoutes> &
    RoutesOf<typeof metricsSeriesRoutes> &
    RoutesOf<typeof poolRoutes> &
    RoutesOf<typeof startRoutes> &
    RoutesOf<typeof bulkRoutes>
>;

/** The front door: JSON routes validated by the same zod schemas that generate `GET /openapi.json`. */
export function createApp() {
  const app = new OpenAPIHono<AppEnv>({
    defaultHook: (result) => {
      if (!result.success) throw validationFailed(result.error.issues);
    },
  });

  app.use("/v1/*", async (c, next) => {
    c.set("arrivedAt", Date.now());
    await next();
  });
  // Task routes are authorised by their signed task token instead (see tasks.ts).
  app.use("/v1/*", async (c, next) => {
    if (c.req.path.startsWith("/v1/tasks/")) return next();
    await requireApiToken(c, async () => {
      await limitTenantWrites(c, next);
    });
  });
  app.use(
    "/v1/*",
    bodyLimit({
      maxSize: LIMITS.requestBodyBytes,
      onError: () => {
        throw new ApiError(413, "payload_too_large", `The request body is over the limit of ${LIMITS.requestBodyBytes} bytes.`);
      },
    }),
  );
  app.use("/v1/*", async (c, next) => {
    const type = c.req.header("Content-Type");
    if ((c.req.method === "POST" || c.req.method === "PUT") && type !== undefined && !/^application\/json\s*(;|$)/i.test(type)) {
      throw new ApiError(415, "unsupported_media_type", "Send the request body as application/json.");
    }
    await next();
  });

  // Before the routes of `/v1/workflows/{id}`, as the more specific path: only a POST to it is the batch (a workflow
  // may still be called "batch", read with GET /v1/workflows/batch and controlled under it).
  app.route("/", workflowBatchRoutes);
  app.route("/", workflowRoutes);
  app.route("/", workflowResultRoutes);
  app.route("/", operatorCommandRoutes);
  app.route("/", eventRoutes);
  app.route("/", diagnosisRoutes);
  app.route("/", mapItemRoutes);
  app.route("/", attemptRoutes);
  app.route("/", definitionRoutes);
  app.route("/", scheduleRoutes);
  app.route("/", targetRoutes);
  app.route("/", webhookRoutes);
  app.route("/", metricsRoutes);
  app.route("/", metricsSeriesRoutes);
  app.route("/", poolRoutes);
  app.route("/", startRoutes);
  app.route("/", bulkRoutes);
  app.route("/", taskRoutes);
  app.route("/", devRoutes);
  app.route("/", docsRoutes);

  app.openAPIRegistry.registerComponent("securitySchemes", "bearerAuth", {
    type: "http",
    scheme: "bearer",
    description: "An API token from the API_TOKENS setting (tenant:token or tenant:name:token entries); it decides the tenant, and its name is recorded with every operator action.",
  });
  // The server is the origin the document was read from, so the reference's sample requests run as shown.
  app.doc31("/openapi.json", (c) => ({
    openapi: "3.1.0",
    info: { title: "Shepherd", version: "1.0.0", description: "Workflows that finish or unwind cleanly." },
    servers: [{ url: new URL(c.req.url).origin, description: "This deployment" }],
  }));
  app.get("/healthz", (c) => c.json({ ok: true }));
  app.get("/", (c) => (wantsHtml(c.req.header("Accept")) ? dashboardPage(c) : c.json({ service: "shepherd", api: "/v1", openapi: "/openapi.json" })));
  app.notFound((c) => {
    const allowed = methodsFor(app.routes, c.req.path);
    if (allowed.length > 0) {
      c.header("Allow", allowed.join(", "));
      return c.json(errorBody("method_not_allowed", `${c.req.method} is not allowed here; use ${allowed.join(" or ")}.`), 405);
    }
    return c.json(errorBody("not_found", `No route for ${c.req.method} ${c.req.path}.`), 404);
  });
  app.onError(onApiError);
  return app;
}

/** The methods that do have a route at this path, for a 405 that says what would work. */
function methodsFor(routes: { path: string; method: string }[], path: string): string[] {
  const methods = routes
    .filter((route) => route.method !== "ALL" && new RegExp(`^${route.path.replace(/:[^/]+/g, "[^/]+")}$`).test(path))
    .map((route) => route.method);
  return [...new Set(methods)];
}
