// The map phase's driver: starts every map workflow with the soak and follows it to its end, keeping the size of
// every answer of `GET /v1/workflows/{id}` and its items' counts as it went; once it has ended, reads all its items
// a page at a time (`GET …/steps/each/items`), which the checks compare with the remote's ledger.
import { QUEUE_CHECK_JITTER, QUEUE_CHECK_MS } from "../../src/domain/machine/queue-check.ts";
import type { ShepherdClient } from "./client.ts";
import type { ItemCounts, MapItemView } from "./api-shapes.ts";
import type { SoakWorkflow } from "./definitions.ts";
import { followToEnd } from "./follow.ts";
import { MAP_STEP_ID } from "./map.ts";
import { newResult } from "./results.ts";
import type { WorkflowResult } from "./results.ts";
import { rotation } from "./rotation.ts";
import { startUntilAccepted } from "./starts.ts";

const POLL_MIN_MS = 250;
const POLL_MAX_MS = 1_000;
/**
 * Once the rest of the soak has ended, a map whose items' counts have not moved for this long is left to the checks:
 * a map that stopped for good (an engine bug) must not hold the whole soak until its deadline. Items whose messages
 * the restart lost move again only when the supervisor finds them lost, up to 1.5 × QUEUE_CHECK_MS after their send:
 * a map waiting for them has not stopped, so the wait is longer than that.
 */
export const STALLED_MAP_MS = QUEUE_CHECK_MS * (1 + QUEUE_CHECK_JITTER) + 15_000;
/** Pages of 1 000 items: 10 pages read a map of the contract's largest, 10 000 items. */
const MAX_ITEM_PAGES = 12;

/** One reading of a map workflow: when, its status, the answer's size and its items' counts. */
export interface MapReading {
  at: number;
  status: string;
  bytes: number;
  items: ItemCounts | null;
}

/** What the driver saw of one map workflow. */
export interface MapRecord {
  id: string;
  readings: MapReading[];
  /** Every item in item order, read after the end; null when a page could not be read. */
  items: MapItemView[] | null;
  /** The workflow's status when its items were read: not terminal when the driver gave up on a map that stopped moving. */
  statusWhenRead?: string;
  itemsError: string | null;
}

export interface MapRun {
  results: WorkflowResult[];
  records: MapRecord[];
}

export interface MapDrive {
  client: ShepherdClient;
  workflows: SoakWorkflow[];
  deadline: number;
}

/** What the soak does with the map phase: its end, a few maps in flight for the alarm sampler, and the word that the rest has ended. */
export interface MapPhase {
  done: Promise<MapRun>;
  openSample: (n: number) => string[];
  /** The rest of the soak has ended: a map that stopped moving is no longer waited for. */
  windDown: () => void;
}

/** Starts every map workflow now and follows each to its end, to `deadline`, or once wound down until it stops moving. */
export function driveMaps({ client, workflows, deadline }: MapDrive): MapPhase {
  const open = new Set<string>();
  let windingDown = false;
  const runs = workflows.map(async (wf) => {
    const result = newResult(wf.id, wf.kind);
    const record: MapRecord = { id: wf.id, readings: [], items: null, itemsError: null };
    result.started = await startUntilAccepted(client, wf.payload, result, { deadline });
    if (!result.started) return { result, record };
    open.add(wf.id);
    await followToEnd(client, result, deadline, {
      minMs: POLL_MIN_MS,
      maxMs: POLL_MAX_MS,
      onAnswer: (answer) => {
        if (answer.value) record.readings.push({ at: Date.now(), status: answer.value.status, bytes: answer.bytes, items: mapStepOf(answer.value.steps)?.items ?? null });
      },
      giveUp: () => windingDown && stalledFor(record.readings, Date.now()) > STALLED_MAP_MS,
    });
    open.delete(wf.id);
    record.statusWhenRead = result.status ?? "unknown";
    Object.assign(record, await readAllItems(client, wf.id, MAP_STEP_ID));
    return { result, record };
  });
  const done = Promise.all(runs).then((ran) => ({ results: ran.map((r) => r.result), records: ran.map((r) => r.record) }));
  const sample = rotation();
  return { done, openSample: (n) => sample([...open], n), windDown: () => (windingDown = true) };
}

/** How long the map's status and items' counts have read the same, as of `now` (0 before two readings). */
export function stalledFor(readings: readonly MapReading[], now: number): number {
  const last = readings.at(-1);
  if (!last) return 0;
  const same = (r: MapReading): boolean => r.status === last.status && JSON.stringify(r.items) === JSON.stringify(last.items);
  const firstDiffering = readings.findLastIndex((r) => !same(r));
  const since = readings[firstDiffering + 1]?.at ?? last.at;
  return firstDiffering === -1 && readings.length < 2 ? 0 : now - since;
}

/** The map step of a view's steps. */
export const mapStepOf = <S extends { id: string }>(steps: readonly S[]): S | undefined => steps.find((step) => step.id === MAP_STEP_ID);

/** Every item of a map step, page after page. */
export async function readAllItems(client: ShepherdClient, id: string, stepId: string): Promise<Pick<MapRecord, "items" | "itemsError">> {
  const items: MapItemView[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < MAX_ITEM_PAGES; page++) {
    const answer = await client.getMapItems(id, stepId, cursor);
    if (!answer.value) return { items: null, itemsError: `page ${page + 1} answered ${answer.status}${answer.error ? ` (${answer.error})` : ""}` };
    items.push(...answer.value.items);
    cursor = answer.value.nextCursor;
    if (cursor === undefined) return { items, itemsError: null };
  }
  return { items: null, itemsError: `more than ${MAX_ITEM_PAGES} pages` };
}
