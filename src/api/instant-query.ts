import { z } from "@hono/zod-openapi";
import { INSTANT_PATTERN } from "../domain/instant";

const INSTANT_MESSAGE = "must be epoch milliseconds or an ISO 8601 date-time with its time zone, such as 2024-05-01T12:00:00Z";

/** An optional query parameter naming an instant (see domain/instant.ts); its value is read with `parseInstant`. */
export function instantQuery(description: string) {
  return z.string().regex(new RegExp(INSTANT_PATTERN), { error: INSTANT_MESSAGE }).optional().openapi({ description, example: "2024-05-01T12:00:00Z" });
}
