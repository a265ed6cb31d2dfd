// The soak's map phase (reliability case 27; contract v1.2, "Map"): a few workflows of one map step each, over a few
// hundred items in the quick soak and up to a few thousand in the full one, started with the soak so that its faults
// and its restart find them mid-map. Each item calls the remote's /item route, which answers 503 once for ~5 % of
// the item keys and hangs once for ~1 % (lib/faults.ts), and echoes the item's index and item in its effect, so the
// map's output can be checked for item order (checks/map.ts).
import { familyId, familyWorkflow, remotePost, SOAK_RETRY, SOAK_STEP_DEFAULTS } from "./definitions.ts";
import type { ItemStepDefinition, RetryPolicy, SoakWorkflow } from "./definitions.ts";

export const MAP_KIND = "map";
/** The one step of a map workflow; its items' keys are `<workflowId>:each:<index>`. */
export const MAP_STEP_ID = "each";
/** The contract's most items per map ("Map": at most 10 000, configurable). */
export const MAX_MAP_ITEMS = 10_000;
/** Case 27's window: items in flight at once per map. */
export const MAP_CONCURRENCY = 50;
/**
 * The map sizes of each preset: a few hundred items in CI, one map of a few thousand in the full soak. Their items
 * add about half the burst's attempts again, on the same 2 cores: no more, so the soak's time stays about the same.
 */
export const DEFAULT_MAP_SIZES: Readonly<Record<"soak" | "quick", readonly number[]>> = { soak: [250, 2000], quick: [100, 150, 250] };

/**
 * The soak's retry policy with more attempts: `toleratedFailures` is 0, so one item of thousands that used up its
 * attempts fails the map. The Worker's faults hit every attempt (~10 % of them lose or fail it), so 5 attempts would
 * leave one item in ~10^5 failing for good, a few % of full soaks; 8 leave one in ~10^8.
 */
export const MAP_ITEM_RETRY: RetryPolicy = { ...SOAK_RETRY, maxAttempts: 8 };
/** A hung item is given up after 3 s and retried (the remote hangs only its first attempt). */
const ITEM_START_TO_CLOSE_MS = 3_000;

/** The items of a map of `count`: short strings, so a map of 10 000 keeps its input well under the answer's 128 KiB. */
export const mapItems = (count: number): string[] => Array.from({ length: count }, (_, i) => `sku-${i}`);

/** The item step: a POST to /item/each carrying the item's index and item. */
export function itemStep(remoteUrl: string): ItemStepDefinition {
  return {
    action: remotePost(`${remoteUrl}/item/${MAP_STEP_ID}`, MAP_STEP_ID, { index: "{{ index }}", item: "{{ item }}" }),
    retry: MAP_ITEM_RETRY,
    timeouts: { startToCloseMs: ITEM_START_TO_CLOSE_MS },
  };
}

/** One map workflow per size: `chaos-<seed>-map-NNNN`, its items in its input. */
export function buildMapWorkflows({ seed, sizes, remoteUrl }: { seed: string; sizes: readonly number[]; remoteUrl: string }): SoakWorkflow[] {
  return sizes.map((size, i) =>
    familyWorkflow(MAP_KIND, {
      id: familyId(seed, MAP_KIND, i),
      input: { items: mapItems(size) },
      definition: {
        name: `chaos-${MAP_KIND}`,
        defaults: SOAK_STEP_DEFAULTS,
        steps: [{ id: MAP_STEP_ID, map: { items: "{{ input.items }}", maxConcurrency: MAP_CONCURRENCY, toleratedFailures: 0, step: itemStep(remoteUrl) } }],
      },
    }),
  );
}

/** The planned items of a map workflow (its input's). */
export const plannedItems = (wf: SoakWorkflow): readonly string[] => wf.payload.input.items ?? [];

/** `<workflowId>:<mapStepId>:<index>`, the contract's Idempotency-Key of an item. */
export const itemKey = (workflowId: string, index: number): string => `${workflowId}:${MAP_STEP_ID}:${index}`;
