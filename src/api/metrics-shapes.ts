import { z } from "@hono/zod-openapi";
import { TIMEOUT_KINDS } from "../domain/machine/metrics";

/** The pieces GET /v1/metrics and GET /v1/metrics/series both answer with. */
export const CountSchema = z.number().int().min(0);

export const TimeoutCountsSchema = z.record(z.enum(TIMEOUT_KINDS), CountSchema);

/** From a deadline to the supervisor's action on it: the histogram's count and bucket upper bounds. */
export const LatenessSchema = z.object({ count: CountSchema, p50: z.number().nullable(), p99: z.number().nullable(), max: z.number().nullable() });
