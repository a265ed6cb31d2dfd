import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { sentenceOf } from "../domain/validation-messages";
import { worthRetrying } from "../workflow/client";
import { NOT_FOUND } from "../workflow/rpc";

export const ErrorSchema = z
  .object({
    error: z.object({
      code: z.string().openapi({ example: "validation_failed" }),
      message: z.string(),
      details: z.array(z.unknown()).optional(),
    }),
  })
  .openapi("Error");

/** The contract's error codes by status; `apiError` throws, `onApiError` shapes every error in one place. */
export class ApiError extends HTTPException {
  constructor(
    status: ContentfulStatusCode,
    readonly code: string,
    message: string,
    readonly details?: unknown[],
    readonly headers?: Record<string, string>,
  ) {
    super(status, { message });
  }
}

export interface ValidationIssue {
  path: PropertyKey[];
  message: string;
  code: string;
}

/** One 400 for every validation problem, its message the first issue as a sentence about its field. */
export function validationFailed(issues: ValidationIssue[]): ApiError {
  const details = issues.map(({ path, message, code }) => ({ path: path.map((key) => (typeof key === "symbol" ? String(key) : key)), message, code }));
  const first = details[0];
  return new ApiError(400, "validation_failed", `Invalid request: ${first ? sentenceOf(first.path, first.message) : "it is not valid"}.`, details);
}

export function errorBody(code: string, message: string, details?: unknown[]) {
  return { error: { code, message, ...(details ? { details } : {}) } };
}

const CODE_BY_STATUS: Record<number, string> = {
  400: "bad_request",
  401: "unauthorized",
  404: "not_found",
  405: "method_not_allowed",
  409: "conflict",
  410: "gone",
  413: "payload_too_large",
  415: "unsupported_media_type",
  429: "rate_limited",
};

/** What the API answers for an error: its status, its body's `error` and any headers (Retry-After). */
export interface ErrorAnswer {
  status: ContentfulStatusCode;
  error: ReturnType<typeof errorBody>["error"];
  headers?: Record<string, string>;
}

/**
 * The answer to any error thrown while serving a request, in one place: for the route's response (`onApiError`),
 * or for one item of a batch, which answers each item as its own request would have been. `path` is for the log.
 */
export function errorAnswer(error: Error, path: string): ErrorAnswer {
  if (error instanceof ApiError) {
    return { status: error.status, ...errorBody(error.code, error.message, error.details), ...(error.headers ? { headers: error.headers } : {}) };
  }
  if (error instanceof HTTPException) {
    // Hono's JSON validator throws a bare 400 for a body that does not parse.
    if (error.status === 400 && /json/i.test(error.message)) return { status: 400, ...errorBody("invalid_json", "The request body is not valid JSON.") };
    return { status: error.status, ...errorBody(CODE_BY_STATUS[error.status] ?? "error", error.message) };
  }
  // Durable Object errors carry flags: busy or briefly unavailable is the client's to retry later, not a crash.
  if ((error as { overloaded?: unknown }).overloaded === true) {
    return { status: 503, ...errorBody("overloaded", "The workflow is busy; retry after a second."), headers: { "Retry-After": "1" } };
  }
  if (worthRetrying(error)) {
    return { status: 503, ...errorBody("unavailable", "The workflow is briefly unavailable; retry after a second."), headers: { "Retry-After": "1" } };
  }
  console.error(JSON.stringify({ message: "unhandled error", path, error: String(error), stack: error.stack }));
  return { status: 500, ...errorBody("internal", "Something went wrong on our side; the request may be retried.") };
}

export function onApiError(error: Error, c: Context): Response {
  // A middleware's own response (bearer-auth's 401, already in the error shape with its challenge).
  if (error instanceof HTTPException && error.res) return error.getResponse();
  const { status, error: body, headers } = errorAnswer(error, c.req.path);
  return c.json({ error: body }, status, headers);
}

/** What a Durable Object or a start refuses with: a value, since error classes do not survive RPC. */
export interface Rejection {
  code: string;
  message: string;
  details?: ValidationIssue[];
  retryAfterSeconds?: number;
}

/** The 404 of a workflow this tenant does not have, naming it (as every other resource's 404 names its own). */
export function noSuchWorkflow(id: string): ApiError {
  return new ApiError(404, "not_found", `No workflow "${id}".`);
}

/** A workflow object's refusal: its "workflow not found" (the object does not know its own id) becomes `noSuchWorkflow`. */
export function workflowRejectionToError(id: string, rejection: Rejection): ApiError {
  return rejection.code === NOT_FOUND.code && rejection.message === NOT_FOUND.message ? noSuchWorkflow(id) : rejectionToError(rejection);
}

/** Maps a discriminated rejection (a Durable Object's, a start's) onto the contract's status codes. */
export function rejectionToError(rejection: Rejection): ApiError {
  switch (rejection.code) {
    case "validation_failed":
      return validationFailed(rejection.details ?? []);
    case "not_configured":
      return new ApiError(503, "not_configured", rejection.message);
    case "overloaded":
      return new ApiError(503, "overloaded", rejection.message, undefined, { "Retry-After": String(rejection.retryAfterSeconds ?? 1) });
    case "not_found":
      return new ApiError(404, "not_found", rejection.message);
    case "stale_attempt":
      return new ApiError(409, "stale_attempt", rejection.message);
    case "gone":
      return new ApiError(410, "gone", rejection.message);
    case "inbox_full":
      return new ApiError(429, "rate_limited", rejection.message);
    case "starts_in_flight":
      return new ApiError(429, "rate_limited", rejection.message, undefined, { "Retry-After": String(rejection.retryAfterSeconds ?? 1) });
    default:
      return new ApiError(409, "conflict", rejection.message);
  }
}
