import { createRoute, OpenAPIHono, z } from "@hono/zod-openapi";
import { ConfigError, targetPolicyFor } from "../config";
import { IdSchema } from "../domain/language/schemas";
import { checkTarget } from "../domain/security/target-policy";
import { recentDeliveries } from "../webhooks/deliveries-db";
import { newSecret } from "../webhooks/signature";
import { DeliveryViewSchema, WebhookSpecSchema, WebhookViewSchema as DomainWebhookViewSchema, WEBHOOKS_PER_TENANT } from "../webhooks/spec";
import { noteSubscriptionsChanged } from "../webhooks/subscription-cache";
import { deleteSubscription, findSubscription, listSubscriptions, saveSubscription, viewOf } from "../webhooks/subscriptions-db";
import type { AppEnv } from "./app-env";
import { ApiError, validationFailed } from "./errors";
import { BEARER_AUTH, errorResponses, jsonBody, jsonContent } from "./openapi-helpers";

const WebhookViewSchema = DomainWebhookViewSchema.openapi("Webhook");
const CreatedWebhookSchema = DomainWebhookViewSchema.extend({
  secret: z.string().optional().openapi({ description: "Only when the service made it (none was given): shown this once" }),
}).openapi("WebhookWithSecret");
const WebhookListSchema = z.object({ webhooks: z.array(WebhookViewSchema) }).openapi("WebhookList");
const DeliveryListSchema = z
  .object({ deliveries: z.array(DeliveryViewSchema).openapi({ description: "The most recent first, at most 100" }) })
  .openapi("WebhookDeliveryList");
const WebhookParamsSchema = z.object({ id: IdSchema.openapi({ param: { name: "id", in: "path" } }) });

const putWebhookRoute = createRoute({
  method: "put",
  path: "/v1/webhooks/{id}",
  operationId: "putWebhook",
  summary: "Subscribe a URL to the tenant's workflow events (history types with a dot: workflow.completed, step.*, *)",
  security: BEARER_AUTH,
  request: { params: WebhookParamsSchema, ...jsonBody(WebhookSpecSchema) },
  responses: {
    201: jsonContent(CreatedWebhookSchema, "Created; with the secret when the service made it"),
    200: jsonContent(CreatedWebhookSchema, "Replaced (the secret is kept unless one is given)"),
    ...errorResponses(400, 401, 409, 413, 415, 429, 503),
  },
});

const listWebhooksRoute = createRoute({
  method: "get",
  path: "/v1/webhooks",
  operationId: "listWebhooks",
  summary: `The tenant's webhooks, by id (at most ${WEBHOOKS_PER_TENANT}), without their secrets`,
  security: BEARER_AUTH,
  responses: { 200: jsonContent(WebhookListSchema, "Every webhook of the tenant"), ...errorResponses(401, 503) },
});

const getWebhookRoute = createRoute({
  method: "get",
  path: "/v1/webhooks/{id}",
  operationId: "getWebhook",
  summary: "Read a webhook, without its secret",
  security: BEARER_AUTH,
  request: { params: WebhookParamsSchema },
  responses: { 200: jsonContent(WebhookViewSchema, "The webhook"), ...errorResponses(400, 401, 404, 503) },
});

const deleteWebhookRoute = createRoute({
  method: "delete",
  path: "/v1/webhooks/{id}",
  operationId: "deleteWebhook",
  summary: "Delete a webhook and its record of deliveries; nothing more is posted to it",
  security: BEARER_AUTH,
  request: { params: WebhookParamsSchema },
  responses: {
    200: jsonContent(z.object({ id: z.string(), deleted: z.literal(true) }), "Deleted"),
    ...errorResponses(400, 401, 404, 503),
  },
});

const deliveriesRoute = createRoute({
  method: "get",
  path: "/v1/webhooks/{id}/deliveries",
  operationId: "listWebhookDeliveries",
  summary: "A webhook's recent deliveries, newest first: each event's status (delivered, failing, failed) and attempts",
  security: BEARER_AUTH,
  request: { params: WebhookParamsSchema },
  responses: { 200: jsonContent(DeliveryListSchema, "Up to 100 deliveries"), ...errorResponses(400, 401, 404, 503) },
});

/** The URL checked as an action's target would be: a refusal is a 400 naming `url`, a broken setting a 503. */
function checkUrl(env: Env, tenant: string, url: string): void {
  let refusal: string | undefined;
  try {
    refusal = checkTarget(url, targetPolicyFor(env, tenant));
  } catch (error) {
    if (error instanceof ConfigError) throw new ApiError(503, "not_configured", `${error.message}; fix the ALLOWED_TARGETS setting.`);
    throw error;
  }
  if (refusal) throw validationFailed([{ code: "custom", path: ["url"], message: refusal }]);
}

export const webhookRoutes = new OpenAPIHono<AppEnv>()
  .openapi(putWebhookRoute, async (c) => {
    const { id } = c.req.valid("param");
    const spec = c.req.valid("json");
    const tenant = c.get("tenant");
    checkUrl(c.env, tenant, spec.url);
    const made = newSecret();
    const saved = await saveSubscription(c.env.DB, tenant, id, spec, made, Date.now());
    if (!saved.ok) throw new ApiError(409, "conflict", `This tenant already has ${WEBHOOKS_PER_TENANT} webhooks, the most it may have; delete one first.`);
    noteSubscriptionsChanged(tenant, true);
    const { created, subscription } = saved;
    const shown = created && spec.secret === undefined ? { secret: made } : {};
    return c.json({ ...viewOf(subscription), ...shown }, created ? 201 : 200);
  })
  .openapi(listWebhooksRoute, async (c) => {
    const subscriptions = await listSubscriptions(c.env.DB, c.get("tenant"));
    return c.json({ webhooks: subscriptions.map(viewOf) }, 200);
  })
  .openapi(getWebhookRoute, async (c) => {
    const { id } = c.req.valid("param");
    const subscription = await findSubscription(c.env.DB, c.get("tenant"), id);
    if (!subscription) throw new ApiError(404, "not_found", `webhook "${id}" not found`);
    return c.json(viewOf(subscription), 200);
  })
  .openapi(deleteWebhookRoute, async (c) => {
    const { id } = c.req.valid("param");
    const tenant = c.get("tenant");
    if (!(await deleteSubscription(c.env.DB, tenant, id))) throw new ApiError(404, "not_found", `webhook "${id}" not found`);
    // Others may remain: this isolate's objects read D1 again rather than assume.
    noteSubscriptionsChanged(tenant, undefined);
    return c.json({ id, deleted: true as const }, 200);
  })
  .openapi(deliveriesRoute, async (c) => {
    const { id } = c.req.valid("param");
    const tenant = c.get("tenant");
    if (!(await findSubscription(c.env.DB, tenant, id))) throw new ApiError(404, "not_found", `webhook "${id}" not found`);
    return c.json({ deliveries: await recentDeliveries(c.env.DB, tenant, id) }, 200);
  });
