// What one step of the baseline does: send the request Shepherd's agent sends (method, headers, JSON body)
// and classify the answer the same way: 2xx succeeds, 408/425/429/5xx is retried, any other status fails
// for good.
import { NonRetryableError } from "cloudflare:workflows";

/** A JSON value, as the remote answers it. Objects and arrays as interfaces: step.do's types can check those. */
export type Json = null | boolean | number | string | JsonArray | JsonObject;
export interface JsonObject {
  [key: string]: Json;
}
export interface JsonArray extends Array<Json> {}

/** One call: whose step it is (the Shepherd-* headers), its Idempotency-Key and its JSON body. */
export interface RemoteCall {
  url: string;
  workflowId: string;
  stepId: string;
  /** Shepherd's key: `<workflow>:<step>`, and `:<index>` for an item of a map. */
  idempotencyKey: string;
  attempt: number;
  body: Json;
  /** Sent as Shepherd-Task-Token: what a remote that answers 202 reports on (index.ts routes the report). */
  taskToken?: string;
}

const TRANSIENT = new Set([408, 425, 429]);

export async function callRemote({ url, workflowId, stepId, idempotencyKey, attempt, body, taskToken }: RemoteCall): Promise<Json> {
  const response = await fetch(url, {
    method: "POST",
    headers: {
      "Content-Type": "application/json",
      "Idempotency-Key": idempotencyKey,
      "Shepherd-Workflow-Id": workflowId,
      "Shepherd-Step-Id": stepId,
      "Shepherd-Attempt": String(attempt),
      ...(taskToken ? { "Shepherd-Task-Token": taskToken } : {}),
    },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  if (response.ok) {
    try {
      return text.trim() === "" ? null : (JSON.parse(text) as Json);
    } catch {
      return { text };
    }
  }
  const message = `remote answered ${response.status}: ${text.slice(0, 200)}`;
  if (TRANSIENT.has(response.status) || response.status >= 500) throw new Error(message);
  throw new NonRetryableError(message);
}
