// The map phase's checks (reliability case 27): every map workflow completed, every item's key had exactly one
// effect, the output is in item order, and the workflow's answer stayed under 128 KiB however many items it has.
import { isDeepStrictEqual } from "node:util";
import { field } from "../api-shapes.ts";
import type { MapItemView } from "../api-shapes.ts";
import type { SoakWorkflow } from "../definitions.ts";
import type { Final } from "../finals.ts";
import { itemKey, plannedItems } from "../map.ts";
import { mapStepOf, STALLED_MAP_MS } from "../map-driver.ts";
import { isTerminal } from "../client.ts";
import type { MapRecord } from "../map-driver.ts";
import type { KeyRecord, RemoteStats } from "../remote-ledger.ts";
import { fail, pass } from "./check.ts";
import type { Check, Violation } from "./check.ts";

/** The contract's bound on `GET /v1/workflows/{id}` of a map's workflow, whatever its item count. */
export const MAX_ANSWER_BYTES = 128 * 1024;

/** Every map workflow completed, its map step succeeded, and every planned item counts as succeeded. */
export function checkMapsCompleted(workflows: readonly SoakWorkflow[], finals: readonly Final[]): Check {
  const name = "every map workflow completes";
  const byId = new Map(finals.map((f) => [f.id, f]));
  const violations: Violation[] = [];
  for (const wf of workflows) {
    const view = byId.get(wf.id)?.view ?? null;
    const step = view && mapStepOf(view.steps);
    const total = plannedItems(wf).length;
    const items = step?.items;
    const done = view?.status === "completed" && step?.status === "succeeded" && items?.total === total && items.succeeded === total;
    if (!done) violations.push({ kind: "map workflow not completed", id: wf.id, status: view?.status ?? null, stepStatus: step?.status ?? null, items: items ?? null, planned: total, error: view?.error?.message });
  }
  const items = workflows.reduce((n, wf) => n + plannedItems(wf).length, 0);
  return (violations.length ? fail : pass)(name, `${workflows.length - violations.length}/${workflows.length} completed (${items} items)`, { violations });
}

/**
 * The remote's ledger has exactly one applied effect under every item's key `<workflowId>:each:<index>`, every index
 * present, and no other item key for the workflow (a key that varied would show up as one more).
 */
export function checkMapEffects(workflows: readonly SoakWorkflow[], remoteStats: RemoteStats): Check {
  const name = "one effect per map item key";
  const itemKeysOf = groupItemKeys(remoteStats);
  const violations: Violation[] = [];
  let effects = 0;
  for (const wf of workflows) {
    const total = plannedItems(wf).length;
    const seen = itemKeysOf.get(wf.id) ?? [];
    effects += seen.reduce((n, k) => n + k.applied, 0);
    const missing: number[] = [];
    const twice: number[] = [];
    for (let i = 0; i < total; i++) {
      const applied = remoteStats.keys[itemKey(wf.id, i)]?.applied ?? 0;
      if (applied === 0) missing.push(i);
      if (applied > 1) twice.push(i);
    }
    const stray = seen.filter((k) => !k.wellFormed || k.item === null || !(k.item.index >= 0 && k.item.index < total)).map((k) => k.key);
    if (missing.length) violations.push({ kind: "item without an effect", id: wf.id, count: missing.length, indexes: missing.slice(0, 20) });
    if (twice.length) violations.push({ kind: "item applied twice", id: wf.id, count: twice.length, indexes: twice.slice(0, 20) });
    if (stray.length) violations.push({ kind: "item key not as the contract says", id: wf.id, count: stray.length, keys: stray.slice(0, 10) });
  }
  const planned = workflows.reduce((n, wf) => n + plannedItems(wf).length, 0);
  return (violations.length ? fail : pass)(name, `${effects} effects / ${planned} item keys; ${violations.length} violation(s)`, { violations });
}

/** The map items' records in the ledger, by workflow (the Shepherd-Workflow-Id they came with). */
function groupItemKeys(remoteStats: RemoteStats): Map<string, KeyRecord[]> {
  const byWorkflow = new Map<string, KeyRecord[]>();
  for (const record of Object.values(remoteStats.keys)) {
    if (record.item === null) continue;
    const list = byWorkflow.get(record.workflowId) ?? [];
    list.push(record);
    byWorkflow.set(record.workflowId, list);
  }
  return byWorkflow;
}

/**
 * The map's output is its items' outputs in item order: the items' pages list every index once, in order, each
 * succeeded with the effect the remote applied under its key (which echoes its index and item); and the step's
 * output in the view is that list, or past its inline size the pointer to the pages.
 */
export function checkMapOrder(workflows: readonly SoakWorkflow[], records: readonly MapRecord[], finals: readonly Final[], remoteStats: RemoteStats): Check {
  const name = "map output in item order";
  const violations: Violation[] = [];
  let inline = 0;
  for (const wf of workflows) {
    const record = records.find((r) => r.id === wf.id);
    if (!record?.items) {
      violations.push({ kind: "items not read", id: wf.id, error: record?.itemsError ?? "not started" });
      continue;
    }
    if (!isTerminal(record.statusWhenRead)) {
      // Pages read mid-map say nothing of its output: the map stopped moving and the driver gave up on it.
      violations.push({ kind: "items read before the map ended", id: wf.id, status: record.statusWhenRead ?? null, stalledForMs: STALLED_MAP_MS });
      continue;
    }
    violations.push(...itemOrderViolations(wf, record.items, remoteStats));
    const output = mapStepOf(finals.find((f) => f.id === wf.id)?.view?.steps ?? [])?.output;
    if (Array.isArray(output)) inline += 1;
    const outputProblem = stepOutputProblem(output, record.items);
    if (outputProblem) violations.push({ kind: outputProblem, id: wf.id });
  }
  const detail = `${workflows.length} map(s), items read in pages; step output inline in ${inline}, paged in ${workflows.length - inline}; ${violations.length} violation(s)`;
  return (violations.length ? fail : pass)(name, detail, { violations: violations.slice(0, 30) });
}

/** Where the pages of one map's items differ from its planned items and the remote's effects. */
export function itemOrderViolations(wf: SoakWorkflow, items: readonly MapItemView[], remoteStats: RemoteStats): Violation[] {
  const planned = plannedItems(wf);
  const violations: Violation[] = [];
  if (items.length !== planned.length) violations.push({ kind: "items listed ≠ items planned", id: wf.id, listed: items.length, planned: planned.length });
  items.forEach((item, i) => {
    const effect = remoteStats.keys[itemKey(wf.id, i)]?.appliedBody ?? null;
    const output = item.output;
    const problem =
      item.index !== i ? `index ${item.index} listed at position ${i}`
      : item.status !== "succeeded" ? `item ${item.status}`
      : field(output, "index") !== i || field(output, "item") !== planned[i] ? "output echoes another item"
      : !isDeepStrictEqual(output, effect) ? "output is not the effect applied under the item's key"
      : null;
    if (problem) violations.push({ kind: problem, id: wf.id, index: i, listed: item, effect });
  });
  return violations.slice(0, 10);
}

/** The step's output in the view: the items' outputs in order, or the pointer to their pages when too large to repeat. */
function stepOutputProblem(output: unknown, items: readonly MapItemView[]): string | null {
  if (Array.isArray(output)) return isDeepStrictEqual(output, items.map((item) => item.output)) ? null : "step output ≠ the items' outputs in order";
  return typeof field(output, "itemsAt") === "string" ? null : "step output neither the items' outputs nor a pointer to them";
}

/** Every answer of `GET /v1/workflows/{id}` read during the run and at its end was under 128 KiB. */
export function checkMapAnswerSize(workflows: readonly SoakWorkflow[], records: readonly MapRecord[]): Check {
  const name = "map workflow's answer < 128 KiB";
  const violations: Violation[] = [];
  let largest = 0;
  let readings = 0;
  for (const wf of workflows) {
    const record = records.find((r) => r.id === wf.id);
    const sizes = record?.readings.map((r) => r.bytes) ?? [];
    readings += sizes.length;
    const max = Math.max(0, ...sizes);
    largest = Math.max(largest, max);
    if (sizes.length === 0) violations.push({ kind: "never read", id: wf.id });
    else if (max >= MAX_ANSWER_BYTES) violations.push({ kind: "answer of 128 KiB or more", id: wf.id, maxBytes: max, items: plannedItems(wf).length });
  }
  const detail = `largest ${(largest / 1024).toFixed(1)} KiB over ${readings} readings of ${workflows.length} map workflow(s)`;
  return (violations.length ? fail : pass)(name, detail, { violations, largestBytes: largest });
}

/** The map phase's four checks; none when the soak ran no map. */
export function checkMaps(workflows: readonly SoakWorkflow[], records: readonly MapRecord[], finals: readonly Final[], remoteStats: RemoteStats): Check[] {
  if (workflows.length === 0) return [];
  return [checkMapsCompleted(workflows, finals), checkMapEffects(workflows, remoteStats), checkMapOrder(workflows, records, finals, remoteStats), checkMapAnswerSize(workflows, records)];
}
