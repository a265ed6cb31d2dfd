/**
 * What an attempt sent and what came back, as `GET /v1/workflows/{id}/steps/{stepId}/attempts/{n}` shows it: the
 * request as the agent sent it (secrets redacted, see redaction.ts) and the answer, each body bounded. Captured
 * where the call is made and stored on the step's row by the commit that records the attempt's report, so keeping
 * it writes no row of its own.
 */
import { z } from "zod";

/** How much of each body is kept: enough to read an error page or a JSON answer, never a step's whole output. */
export const CAPTURED_BODY_BYTES = 4 * 1024;

/** The exchanges of a step's latest this many attempts are kept; older ones are dropped as new ones are stored. */
export const KEPT_EXCHANGES = 10;

export const CapturedBodySchema = z.object({
  /** The body as text (UTF-8), its first CAPTURED_BODY_BYTES bytes. */
  text: z.string(),
  /** The whole body's length in bytes; for an answer past what the agent reads at all, the bytes it read. */
  bytes: z.number(),
  /** Set when `text` is only the start of the body. */
  truncated: z.literal(true).optional(),
});

export type CapturedBody = z.infer<typeof CapturedBodySchema>;

const HeadersSchema = z.record(z.string(), z.string());

export const CapturedRequestSchema = z.object({
  method: z.string().optional(),
  url: z.string().optional(),
  /** A worker task: the pool whose worker it was handed to (the body is the task's input). */
  pool: z.string().optional(),
  /** As sent, names in lower case, secret values redacted. */
  headers: HeadersSchema.optional(),
  body: CapturedBodySchema.optional(),
});

export const CapturedResponseSchema = z.object({
  status: z.number().optional(),
  /** A few that explain the body (content-type, content-length, retry-after, location). */
  headers: HeadersSchema.optional(),
  body: CapturedBodySchema.optional(),
});

export type CapturedRequest = z.infer<typeof CapturedRequestSchema>;
export type CapturedResponse = z.infer<typeof CapturedResponseSchema>;

/** One call: its request, and its answer when one came (none: a network error, an abort, a refused target). */
export const ExchangeSchema = z.object({ request: CapturedRequestSchema, response: CapturedResponseSchema.optional() });

export type Exchange = z.infer<typeof ExchangeSchema>;

/**
 * An attempt's exchange: its request and answer, and the step's `verify` call when the attempt asked it first. Parts
 * arrive separately (a worker task's request at its hand-out, its answer with the worker's report) and are merged.
 */
export const AttemptExchangeSchema = z.object({
  request: CapturedRequestSchema.optional(),
  response: CapturedResponseSchema.optional(),
  verify: ExchangeSchema.optional(),
});

export type AttemptExchange = z.infer<typeof AttemptExchangeSchema>;

/** An exchange to store with a commit: on the row of `stepId`, under its attempt's number. */
export interface StepExchange {
  stepId: string;
  attempt: number;
  exchange: AttemptExchange;
}

/** A body kept to its first CAPTURED_BODY_BYTES bytes; `totalBytes` when more was there than `bytes` holds. */
export function capturedBody(bytes: Uint8Array, totalBytes = bytes.byteLength): CapturedBody {
  if (totalBytes <= CAPTURED_BODY_BYTES && bytes.byteLength === totalBytes) return { text: new TextDecoder().decode(bytes), bytes: totalBytes };
  // A cut through a multi-byte character would leave a replacement character: the partial character is dropped.
  const text = new TextDecoder().decode(bytes.subarray(0, CAPTURED_BODY_BYTES)).replace(/\uFFFD$/, "");
  return { text, bytes: totalBytes, truncated: true };
}

/** A body the caller has as text (a rendered JSON body, a worker's report). */
export function capturedText(text: string): CapturedBody {
  return capturedBody(new TextEncoder().encode(text));
}

/** A worker task as its pool hands it out (the claim's task), as its attempt's request: the pool and the rendered input. */
export function handedOutExchange(task: { stepId: string; attempt: number; action: { type: string; input?: unknown } }, pool: string): StepExchange {
  const request: CapturedRequest = { pool, body: capturedText(JSON.stringify(task.action.input ?? null)) };
  return { stepId: task.stepId, attempt: task.attempt, exchange: { request } };
}

/** A worker's report (`complete` with its output, `fail` with its error), as its attempt's answer. */
export function workerAnswer(reported: { output: unknown } | { error: unknown }): AttemptExchange {
  return { response: { body: capturedText(JSON.stringify(reported)) } };
}
