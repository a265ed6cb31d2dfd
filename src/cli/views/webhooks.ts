import type { CreatedWebhook, DeliveryList, WebhookList, WebhookView } from "../api-types";
import { fields, table, time } from "../format";

export function webhookListLines(list: WebhookList): string[] {
  if (list.webhooks.length === 0) return ["no webhooks"];
  return table(
    ["ID", "EVENTS", "UPDATED", "URL"],
    list.webhooks.map((webhook) => [webhook.id, webhook.events.join(","), time(webhook.updatedAt), webhook.url]),
  );
}

export function webhookLines(webhook: WebhookView): string[] {
  return fields([
    ["webhook", webhook.id],
    ["url", webhook.url],
    ["events", webhook.events.join(", ")],
    ["created", time(webhook.createdAt)],
    ["updated", time(webhook.updatedAt)],
  ]);
}

/** The secret is shown once, when the service made it: the person must keep it now. */
export function savedWebhookLines(webhook: CreatedWebhook): string[] {
  const secret = webhook.secret === undefined ? [] : [`secret: ${webhook.secret}  (shown this once: keep it to verify the signatures)`];
  return [`saved webhook ${webhook.id}: ${webhook.url} for ${webhook.events.join(", ")}`, ...secret];
}

export function deliveryLines(list: DeliveryList): string[] {
  if (list.deliveries.length === 0) return ["no deliveries"];
  const rows = list.deliveries.map((delivery) => [
    time(delivery.lastAt),
    delivery.type,
    delivery.workflowId,
    delivery.status,
    String(delivery.attempts),
    [delivery.lastStatus === undefined ? "" : String(delivery.lastStatus), delivery.lastError ?? ""].filter(Boolean).join(" "),
  ]);
  return table(["LAST TRY", "EVENT", "WORKFLOW", "STATUS", "ATTEMPTS", "LAST ANSWER"], rows);
}
