import type { WebhookSpec } from "../../client/index";
import { stringFlag, type Command } from "../command";
import { deliveryLines, savedWebhookLines, webhookLines, webhookListLines } from "../views/webhooks";

const webhooks: Command = {
  name: "webhooks",
  summary: "list the webhooks, without their secrets (get, put, delete, deliveries: below)",
  args: [],
  async run({ client, out }) {
    out.result(await client.webhooks.list(), webhookListLines);
  },
};

const getWebhook: Command = {
  name: "webhooks get",
  summary: "show a webhook: its URL and the events it gets, without its secret",
  args: ["<id>"],
  async run({ client, out, args: [id = ""] }) {
    out.result(await client.webhooks.get(id), webhookLines);
  },
};

const putWebhook: Command = {
  name: "webhooks put",
  summary: "subscribe a URL to the workflow events named: creates the webhook, or replaces it",
  args: ["<id>"],
  flags: {
    // Not --url: that one is every command's service.
    endpoint: { type: "string", value: "<url>", description: "where the events are posted", required: true },
    events: { type: "string", value: "<types>", description: "the history types, comma-separated: workflow.completed, step.*, *", required: true },
    secret: { type: "string", value: "<secret>", description: "the signing secret (whsec_...); default: the service makes one and shows it once" },
  },
  notes: ["Example: shepherd webhooks put ops --endpoint https://ops.example.com/hook --events 'workflow.failed,workflow.needs_attention'"],
  async run({ client, out, args: [id = ""], flags }) {
    const secret = stringFlag(flags, "secret");
    const events = (stringFlag(flags, "events") ?? "").split(",").map((event) => event.trim());
    const spec: WebhookSpec = { url: stringFlag(flags, "endpoint") ?? "", events, ...(secret === undefined ? {} : { secret }) };
    out.result(await client.webhooks.put(id, spec), savedWebhookLines);
  },
};

const deleteWebhook: Command = {
  name: "webhooks delete",
  summary: "delete a webhook and its record of deliveries: nothing more is posted to it",
  args: ["<id>"],
  async run({ client, out, args: [id = ""] }) {
    out.result(await client.webhooks.delete(id), () => [`deleted webhook ${id}`]);
  },
};

const deliveries: Command = {
  name: "webhooks deliveries",
  summary: "a webhook's recent deliveries, newest first: each event's status (delivered, failing, failed) and attempts",
  args: ["<id>"],
  async run({ client, out, args: [id = ""] }) {
    out.result(await client.webhooks.deliveries(id), deliveryLines);
  },
};

export const WEBHOOK_COMMANDS: Command[] = [webhooks, getWebhook, putWebhook, deleteWebhook, deliveries];
