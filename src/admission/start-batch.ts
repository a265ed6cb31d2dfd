/**
 * Many starts in one request (`POST /v1/workflows/batch`, as Cloudflare Workflows' `createBatch`): each item is
 * checked and started exactly as `POST /v1/workflows` would start it alone, through the same `startWorkflowRun`
 * (idempotent by id, back-pressure and the cap on starts in progress per tenant and name), so one bad item is its own answer and refuses no other.
 */
import { StartWorkflowSchema } from "../domain/language/definition";
import type { StartOutcome } from "./start-workflow";
import { startFromFrontDoor, type StartsInFlightRefusal } from "./starts-in-flight";

/**
 * Items started at once. Each is a D1 read at most and one object's call, so a few in flight fill the wait
 * without letting one request of 100 crowd out the front door's other work.
 */
export const BATCH_CONCURRENCY = 8;

/** What became of one item: a start's outcome, a body that is not a start, or an error a start alone would have thrown. */
export type BatchItemOutcome =
  | StartOutcome
  | StartsInFlightRefusal
  | { ok: false; code: "validation_failed"; message: string; details: { path: PropertyKey[]; message: string; code: string }[] }
  | { ok: false; code: "thrown"; error: Error };

/**
 * Starts every item, in item order as far as it matters: at most BATCH_CONCURRENCY at once, and an item whose id
 * an earlier item also names waits for that one, so the first of them is the one created (201) and the next
 * answers 200, or 409 for another body, as the same two starts one after the other would.
 */
export async function startWorkflowBatch(env: Env, tenant: string, items: readonly unknown[]): Promise<BatchItemOutcome[]> {
  const outcomes = new Array<BatchItemOutcome>(items.length);
  const latestOfId = new Map<string, Promise<unknown>>();
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < items.length) {
      const index = next++;
      const id = idOf(items[index]);
      // Taken in item order, so the earlier item of this id is already under way: waiting for it cannot deadlock.
      const earlier = id === undefined ? undefined : latestOfId.get(id);
      const run = (earlier ?? Promise.resolve()).then(() => startItem(env, tenant, items[index]));
      if (id !== undefined) latestOfId.set(id, run);
      outcomes[index] = await run;
    }
  };
  await Promise.all(Array.from({ length: Math.min(BATCH_CONCURRENCY, items.length) }, lane));
  return outcomes;
}

async function startItem(env: Env, tenant: string, item: unknown): Promise<BatchItemOutcome> {
  const parsed = StartWorkflowSchema.safeParse(item);
  if (!parsed.success) {
    const details = parsed.error.issues.map(({ path, message, code }) => ({ path, message, code }));
    return { ok: false, code: "validation_failed", message: details[0]?.message ?? "invalid", details };
  }
  try {
    return await startFromFrontDoor(env, tenant, parsed.data);
  } catch (error) {
    return { ok: false, code: "thrown", error: error instanceof Error ? error : new Error(String(error)) };
  }
}

/** The id an item names, as far as it names one (a bad one is that item's 400, and orders nothing). */
function idOf(item: unknown): string | undefined {
  const id = typeof item === "object" && item !== null ? (item as { id?: unknown }).id : undefined;
  return typeof id === "string" ? id : undefined;
}
