import type { z } from "@hono/zod-openapi";
import { ErrorSchema } from "./errors";

export function jsonContent<T extends z.ZodType>(schema: T, description: string) {
  return { content: { "application/json": { schema } }, description };
}

export function jsonBody<T extends z.ZodType>(schema: T, required = true) {
  return { body: { content: { "application/json": { schema } }, required } };
}

const ERROR_DESCRIPTIONS = {
  400: "Invalid JSON or a request that fails validation",
  401: "Missing or invalid token",
  413: "The request body is over 1 MiB",
  404: "No such workflow, step or definition (version)",
  409: "Conflicts with the workflow's state, or the attempt is stale",
  410: "The step has ended",
  415: "The body is not application/json",
  429: "Too many writes for this tenant (see Retry-After), or the workflow's inbox is full",
  503: "Missing or malformed configuration, or the workflow is busy (overloaded; see Retry-After)",
} as const;

export function errorResponses<S extends keyof typeof ERROR_DESCRIPTIONS>(...statuses: S[]) {
  return Object.fromEntries(statuses.map((status) => [status, jsonContent(ErrorSchema, ERROR_DESCRIPTIONS[status])])) as {
    [K in S]: ReturnType<typeof jsonContent<typeof ErrorSchema>>;
  };
}

/** The security requirement of every `/v1` route except the task routes (see app.ts for the scheme). */
export const BEARER_AUTH = [{ bearerAuth: [] }];

/**
 * The task routes' requirement: no scheme OpenAPI can name. The signed task token in the path is the credential
 * (OpenAPI has no API key in a path), so the document says outright that no API token is asked for.
 */
export const TASK_TOKEN_IN_PATH: { [scheme: string]: string[] }[] = [];
