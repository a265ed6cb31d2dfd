/**
 * A dead letter of the STARTS queue: a message that can never start, or that the queue gave up on, kept with its
 * error for an operator. What is recorded and what the API shows of it; the SQL is dead-letters-db.ts.
 */
import { z } from "zod";

/** Why the message did not start, in the front door's error shape (`validation_failed` with its issues, ...). */
export interface DeadLetterError {
  code: string;
  message: string;
  details?: unknown[];
}

export interface DeadLetterRecord {
  /** The deployment's tenant it belongs to; undefined when the message named none the deployment knows. */
  tenant: string | undefined;
  messageId: string;
  body: unknown;
  error: DeadLetterError;
  /** How many times the queue had delivered the message. */
  attempts: number;
  at: number;
}

/** The body is kept for the operator to see what was sent, not as a copy to send again: a start body is rarely more. */
export const STORED_BODY_MAX = 8 * 1024;
const STORED_MESSAGE_MAX = 1024;
/** Enough issues to find every problem of a body, not a page of them. */
const STORED_DETAILS_MAX = 20;

export const DeadLetterViewSchema = z.object({
  messageId: z.string(),
  tenant: z.string().nullable().describe("The tenant the message named, as sent (null when it named none)"),
  workflowId: z.string().nullable().describe("The workflow id the message's start named (null when it named none)"),
  error: z.object({ code: z.string(), message: z.string(), details: z.array(z.unknown()).optional() }),
  body: z.string().describe(`The message body as JSON, cut at ${STORED_BODY_MAX} characters`),
  bodyTruncated: z.boolean(),
  attempts: z.number().describe("How many times the queue had delivered the message when it was last recorded"),
  firstSeenAt: z.number(),
  lastSeenAt: z.number(),
});

export type DeadLetterView = z.infer<typeof DeadLetterViewSchema>;

/** The body as JSON text within the bound. Messages are structured clones, so one may hold what JSON cannot. */
export function storedBody(body: unknown): { text: string; truncated: boolean } {
  let text: string;
  try {
    text = JSON.stringify(body) ?? String(body);
  } catch {
    text = String(body);
  }
  return text.length > STORED_BODY_MAX ? { text: text.slice(0, STORED_BODY_MAX), truncated: true } : { text, truncated: false };
}

/** The error within its bounds: a long message cut, its first 20 issues. */
export function storedError(error: DeadLetterError): DeadLetterError {
  const message = error.message.length > STORED_MESSAGE_MAX ? `${error.message.slice(0, STORED_MESSAGE_MAX - 1)}…` : error.message;
  return { code: error.code, message, ...(error.details ? { details: error.details.slice(0, STORED_DETAILS_MAX) } : {}) };
}
