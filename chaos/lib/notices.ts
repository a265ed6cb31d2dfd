// The end notices the remote receives (a start's `notify`: the final view POSTed when the workflow ends, signed with
// Standard Webhooks): each one read and its signature verified with the `standardwebhooks` library and the secret the
// arrivals phase gave its starts, as a receiver of the user's own would. The remote keeps them; the checks read them.
import { Webhook } from "standardwebhooks";
import { field, isRecord } from "./api-shapes.ts";

/** The remote's path that takes every end notice (chaos/remote.ts). */
export const NOTICE_PATH = "/notify";

/** One notice as it arrived: its Standard Webhooks headers, whether they verify, and what its body says. */
export interface NoticeRecord {
  /** Epoch ms of its arrival. */
  at: number;
  webhookId: string | null;
  /** `webhook-timestamp`, in seconds, as sent. */
  timestamp: string | null;
  verified: boolean;
  /** Why it did not verify (no signature, a wrong one, a timestamp out of tolerance …). */
  verifyError?: string;
  /** The body's `type`: `workflow.<status>`. */
  type: string | null;
  /** From the body's `data`, the final view. */
  workflowId: string | null;
  status: string | null;
  redriveCount: number | null;
  output?: unknown;
  error?: unknown;
}

/** The headers a notice carries, by their lower-case names. */
export type NoticeHeaders = Readonly<Record<string, string | string[] | undefined>>;

const header = (headers: NoticeHeaders, name: string): string | null => {
  const value = headers[name];
  return typeof value === "string" ? value : (value?.[0] ?? null);
};

/** Reads one notice and verifies its signature with `secret`. */
export function readNotice(headers: NoticeHeaders, text: string, secret: string, at: number): NoticeRecord {
  const webhookId = header(headers, "webhook-id");
  const timestamp = header(headers, "webhook-timestamp");
  let verifyError: string | undefined;
  try {
    new Webhook(secret).verify(text, { "webhook-id": webhookId ?? "", "webhook-timestamp": timestamp ?? "", "webhook-signature": header(headers, "webhook-signature") ?? "" });
  } catch (error) {
    verifyError = error instanceof Error ? error.message : String(error);
  }
  const body = parse(text);
  const data = field(body, "data");
  const redriveCount = field(data, "redriveCount");
  return {
    at,
    webhookId,
    timestamp,
    verified: verifyError === undefined,
    ...(verifyError === undefined ? {} : { verifyError }),
    type: asText(field(body, "type")),
    workflowId: asText(field(data, "id")),
    status: asText(field(data, "status")),
    redriveCount: typeof redriveCount === "number" ? redriveCount : null,
    ...(isRecord(data) && "output" in data ? { output: data.output } : {}),
    ...(isRecord(data) && "error" in data ? { error: data.error } : {}),
  };
}

const asText = (value: unknown): string | null => (typeof value === "string" ? value : null);

function parse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

/** The id the contract gives the notice of a workflow's end: `<workflowId>:end:<redriveCount>`. */
export const noticeId = (workflowId: string, redriveCount = 0): string => `${workflowId}:end:${redriveCount}`;
