/**
 * A `map` step: one item step run over every item of an array, `maxConcurrency` at a time, inside the workflow's
 * own object (machine/map/). Its item step is checked and planned like a step of its own (definition.ts, plan.ts):
 * its schema is the step's, which this module cannot import without a cycle through the kinds' list.
 */
import { z } from "zod";
import { defineStepKind } from "./step-kind";
import { MAP_ITEMS_CEILING } from "../../contract";

// Items one map may run by default (MAP_MAX_ITEMS sets it, up to the ceiling): more is a clear error when the
// items are known. In the contract's module, as the deployment's settings read them too.
export { MAP_ITEMS_CEILING, MAX_MAP_ITEMS } from "../../contract";
export const MAX_MAP_CONCURRENCY = 1_000;
export const DEFAULT_MAP_CONCURRENCY = 10;

export const MapSchema = z
  .strictObject({
    /** A template that yields an array (`{{ input.images }}`), or a literal array. */
    items: z.union([z.string().min(1).max(2048), z.array(z.unknown()).max(MAP_ITEMS_CEILING)]),
    /** Items in flight at once. Default 10. */
    maxConcurrency: z.int().min(1).max(MAX_MAP_CONCURRENCY).optional(),
    /** Items that may fail for good before the step fails. Default 0. */
    toleratedFailures: z.int().min(0).max(MAP_ITEMS_CEILING).optional(),
    /** The same, as a share of the items (0 to 100). */
    toleratedFailurePercent: z.number().min(0).max(100).optional(),
    /** The step run for each item: any kind but `map`, without `id`, `dependsOn` or `when`. */
    step: z.record(z.string(), z.unknown()),
  })
  .refine((map) => map.toleratedFailures === undefined || map.toleratedFailurePercent === undefined, "give toleratedFailures or toleratedFailurePercent, not both");

export type MapInput = z.infer<typeof MapSchema>;

const MapPlanSchema = z.object({
  items: z.union([z.string(), z.array(z.unknown())]),
  maxConcurrency: z.number(),
  toleratedFailures: z.number().optional(),
  toleratedFailurePercent: z.number().optional(),
  /** The deployment's MAP_MAX_ITEMS when the workflow started, if it was not the default. */
  maxItems: z.number().optional(),
});

/** How far a map got; its items' own rows hold each one's status and output (see machine/map/). */
export const MapProgressSchema = z.object({
  total: z.number(),
  /** The next item never started: items from here on are pending. */
  next: z.number(),
  running: z.number(),
  succeeded: z.number(),
  failed: z.number(),
  skipped: z.number(),
  /** Counts the items' ends, in order: compensation undoes the newest first. */
  seq: z.number().optional(),
  /** Items a redrive runs again (those that did not succeed), taken before `next`. */
  redo: z.array(z.number()).optional(),
});

export type MapProgress = z.infer<typeof MapProgressSchema>;

const ItemCountsSchema = z.object({
  total: z.number(),
  pending: z.number(),
  running: z.number(),
  succeeded: z.number(),
  failed: z.number(),
  skipped: z.number(),
});

export type MapItemCounts = z.infer<typeof ItemCountsSchema>;

/** The counts a view shows: never the items themselves, which are paged apart. */
export function itemCounts(progress: MapProgress): MapItemCounts {
  const { total, next, running, succeeded, failed, skipped } = progress;
  return { total, pending: total - next + (progress.redo?.length ?? 0), running, succeeded, failed, skipped };
}

export const mapStep = defineStepKind({
  kind: "map",
  definition: MapSchema,
  plan: z.object({ kind: z.literal("map"), map: MapPlanSchema }),
  state: z.object({ kind: z.literal("map"), items: MapProgressSchema.optional() }),
  planOf: (map) => ({
    kind: "map" as const,
    map: {
      items: map.items,
      maxConcurrency: map.maxConcurrency ?? DEFAULT_MAP_CONCURRENCY,
      ...(map.toleratedFailures === undefined ? {} : { toleratedFailures: map.toleratedFailures }),
      ...(map.toleratedFailurePercent === undefined ? {} : { toleratedFailurePercent: map.toleratedFailurePercent }),
    },
  }),
  viewFields: {
    /** A map's items by status; `GET …/steps/{stepId}/items` pages through them. */
    items: ItemCountsSchema.optional(),
  },
  view: (step) => (step.items ? { items: itemCounts(step.items) } : {}),
});
