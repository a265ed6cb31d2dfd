// The parent/child phase's checks (reliability case 28): every parent ended as predicted with its child's output as
// its step's; one child per (parent, step, attempt), each pointing back at its parent; a cancelled parent's open
// child ended as its `onParentClose` says; and a child's end applied once in its parent's history, however often its
// notice came.
import { isDeepStrictEqual } from "node:util";
import type { HistoryEvent, IndexRow, WorkflowView } from "../api-shapes.ts";
import type { ShepherdClient } from "../client.ts";
import { listChildren } from "../children-driver.ts";
import type { ChildRun, ParentRecord } from "../children-driver.ts";
import type { ParentFamily, ParentPlan } from "../children.ts";
import type { Final } from "../finals.ts";
import { fail, pass } from "./check.ts";
import type { Check, Violation } from "./check.ts";

/** The views at the end, by id: the final reading's, and those of children listed only at the checks. */
export type Views = ReadonlyMap<string, WorkflowView>;
/** Per parent, its children as `?parentId=` listed them at the checks (null: the list could not be read). */
export type Listings = ReadonlyMap<string, IndexRow[] | null>;

/** How the closed child of a cancelled parent may end, per its step's `onParentClose`. */
const CLOSED_CHILD_ENDS: Readonly<Record<string, readonly string[]>> = { cancel: ["cancelled"], terminate: ["terminated"], abandon: ["running", "completed"] };

/** The step id a child's view must name as its parent's: the step, or for a map's item `<mapStepId>#<index>`. */
export function parentStepOf(plan: ParentPlan, childId: string): string {
  return plan.shape === "map" ? `${plan.stepId}#${childId.slice(childId.lastIndexOf(":") + 1)}` : plan.stepId;
}

/** Check (1): the parent's status, and its step's output (a map's: each item's) equal to its child's output. */
export function parentEndViolations(plan: ParentPlan, views: Views, record: ParentRecord | undefined): Violation[] {
  const view = views.get(plan.id);
  const expected = plan.cancelled ? "cancelled" : "completed";
  if (view?.status !== expected) return [{ kind: `parent not ${expected}`, id: plan.id, shape: plan.shape, status: view?.status ?? null, error: view?.error?.message }];
  if (plan.cancelled) return [];
  const step = view.steps.find((s) => s.id === plan.stepId);
  if (plan.shape === "map") return mapOutputViolations(plan, views, record, step?.output);
  const lastChild = plan.children.at(-1) ?? "";
  const child = views.get(lastChild);
  if (step?.status !== "succeeded" || step.child?.id !== lastChild) return [{ kind: "step not succeeded with its last child", id: plan.id, stepStatus: step?.status ?? null, child: step?.child ?? null, expectedChild: lastChild }];
  if (child?.status !== "completed" || !isDeepStrictEqual(step.output, child.output)) return [{ kind: "step output ≠ its child's output", id: plan.id, childId: lastChild, childStatus: child?.status ?? null, stepOutput: step.output, childOutput: child?.output }];
  return [];
}

/** A map of children: item i's output is child i's, and the step's inline output (if inline) is the items' in order. */
function mapOutputViolations(plan: ParentPlan, views: Views, record: ParentRecord | undefined, stepOutput: unknown): Violation[] {
  const items = record?.items;
  if (!items) return [{ kind: "items not read", id: plan.id, error: record?.itemsError ?? "not started" }];
  const violations: Violation[] = [];
  if (items.length !== plan.children.length) violations.push({ kind: "items listed ≠ children planned", id: plan.id, listed: items.length, planned: plan.children.length });
  plan.children.forEach((childId, i) => {
    const child = views.get(childId);
    const item = items[i];
    if (item?.status !== "succeeded" || child?.status !== "completed" || !isDeepStrictEqual(item.output, child.output)) {
      violations.push({ kind: "item output ≠ its child's output", id: plan.id, index: i, childId, item: item ?? null, childStatus: child?.status ?? null, childOutput: child?.output });
    }
  });
  if (Array.isArray(stepOutput) && !isDeepStrictEqual(stepOutput, items.map((item) => item.output))) violations.push({ kind: "map output ≠ the items' outputs in order", id: plan.id });
  return violations.slice(0, 10);
}

/**
 * Check (2): exactly the predicted children listed, once each, each pointing back at its parent and step. A parent
 * that did not end as predicted may not have started them all (check 1 says so): then only extras count.
 */
export function childListViolations(plan: ParentPlan, listed: IndexRow[] | null | undefined, views: Views): Violation[] {
  if (!listed) return [{ kind: "children not listed", id: plan.id }];
  const ids = listed.map((row) => row.id);
  const violations: Violation[] = [];
  const asPredicted = views.get(plan.id)?.status === (plan.cancelled ? "cancelled" : "completed");
  const missing = asPredicted ? plan.children.filter((id) => !ids.includes(id)) : [];
  const extra = ids.filter((id) => !plan.children.includes(id));
  const twice = ids.filter((id, i) => ids.indexOf(id) !== i);
  if (missing.length) violations.push({ kind: "predicted child not listed", id: plan.id, children: missing.slice(0, 10) });
  if (extra.length) violations.push({ kind: "child not predicted (a second child for a step attempt?)", id: plan.id, children: extra.slice(0, 10) });
  if (twice.length) violations.push({ kind: "child listed twice", id: plan.id, children: twice.slice(0, 10) });
  for (const childId of plan.children.filter((id) => ids.includes(id))) {
    const expected = { id: plan.id, stepId: parentStepOf(plan, childId) };
    const parent = views.get(childId)?.parent ?? null;
    if (!isDeepStrictEqual(parent, expected)) violations.push({ kind: "child's parent does not point back", id: plan.id, childId, parent, expected });
  }
  return violations;
}

/** Check (3): the soak's cancel was sent while the child held, the child's close is in the history once, and it ended as `onParentClose` says. */
export function closedChildViolations(plan: ParentPlan, views: Views, events: readonly HistoryEvent[], record: ParentRecord | undefined): Violation[] {
  if (!plan.cancelled || !plan.onParentClose) return [];
  const childId = plan.children[0] ?? "";
  if (!record?.cancelSentAt) return [{ kind: "child never seen holding, so never cancelled", id: plan.id, childId }];
  const violations: Violation[] = [];
  const closes = events.filter((e) => e.type === "child_workflow_closed" && e.data?.childId === childId);
  if (closes.length !== 1 || closes[0]?.data?.action !== plan.onParentClose) violations.push({ kind: "child's close not recorded once as onParentClose says", id: plan.id, childId, closes: closes.map((e) => e.data), onParentClose: plan.onParentClose });
  const status = views.get(childId)?.status ?? null;
  const allowed = CLOSED_CHILD_ENDS[plan.onParentClose] ?? [];
  if (!status || !allowed.includes(status)) violations.push({ kind: `child of a cancelled parent (${plan.onParentClose}) not ${allowed.join(" or ")}`, id: plan.id, childId, status });
  return violations;
}

/**
 * Check (4): per child, at most one `child_workflow_started` and one `child_workflow_ended` in the parent's history,
 * the latter with the child's final status; exactly one ended for every child of a parent that completed (it waited
 * for them all).
 */
export function childEventViolations(plan: ParentPlan, views: Views, events: readonly HistoryEvent[]): Violation[] {
  const violations: Violation[] = [];
  const waitedForAll = views.get(plan.id)?.status === "completed";
  const ofType = (type: string, childId: string): HistoryEvent[] => events.filter((e) => e.type === type && e.data?.childId === childId);
  for (const childId of plan.children) {
    const ended = ofType("child_workflow_ended", childId);
    const started = ofType("child_workflow_started", childId);
    const status = views.get(childId)?.status ?? null;
    if (ended.length > 1) violations.push({ kind: "child's end applied twice", id: plan.id, childId, ended: ended.map((e) => e.data?.status) });
    if (waitedForAll && ended.length === 0) violations.push({ kind: "child's end never applied", id: plan.id, childId, status });
    if (ended.length && ended.some((e) => e.data?.status !== status)) violations.push({ kind: "end applied ≠ the child's final status", id: plan.id, childId, applied: ended[0]?.data?.status, status });
    if (started.length > 1) violations.push({ kind: "child's start recorded twice", id: plan.id, childId, started: started.length });
  }
  return violations;
}

/** What each check reads: the predictions, the driver's records, the views and histories at the end, the listings. */
export interface ChildEvidence {
  family: ParentFamily;
  run: ChildRun;
  views: Views;
  histories: ReadonlyMap<string, readonly HistoryEvent[]>;
  listings: Listings;
}

/** The phase's four checks from what was read. */
export function judgeChildren({ family, run, views, histories, listings }: ChildEvidence): Check[] {
  const { plans } = family;
  const recordOf = (plan: ParentPlan): ParentRecord | undefined => run.records.find((r) => r.id === plan.id);
  const eventsOf = (plan: ParentPlan): readonly HistoryEvent[] => histories.get(plan.id) ?? [];
  const children = plans.reduce((n, p) => n + p.children.length, 0);
  const cancelled = plans.filter((p) => p.cancelled);
  const ends = plans.flatMap((p) => parentEndViolations(p, views, recordOf(p)));
  const lists = plans.flatMap((p) => childListViolations(p, listings.get(p.id), views));
  const closes = cancelled.flatMap((p) => closedChildViolations(p, views, eventsOf(p), recordOf(p)));
  const once = plans.flatMap((p) => childEventViolations(p, views, eventsOf(p)));
  const listed = [...listings.values()].reduce((n, rows) => n + (rows?.length ?? 0), 0);
  return [
    verdict("every parent ends as predicted, with its child's output", ends, `${plans.length - new Set(ends.map((v) => v.id)).size}/${plans.length} as predicted (${plans.length - cancelled.length} to complete, ${cancelled.length} cancelled by the soak)`),
    verdict("one child per (parent, step, attempt)", lists, `${listed} listed by ?parentId= / ${children} predicted, each pointing back`),
    verdict("a cancelled parent's open child ends per onParentClose", closes, `${cancelled.map((p) => p.onParentClose).join(", ") || "none"}`),
    verdict("a child's end applied once in its parent's history", once, `${children} children, their starts and ends in ${plans.length} parent histories`),
  ];
}

function verdict(name: string, violations: Violation[], detail: string): Check {
  return (violations.length ? fail : pass)(name, `${detail}; ${violations.length} violation(s)`, { violations: violations.slice(0, 30) });
}

/** Lists every parent's children now (the index has settled by the time the checks run) and reads any child the final reading missed. */
export async function checkChildren(client: ShepherdClient, family: ParentFamily, run: ChildRun, finals: readonly Final[]): Promise<Check[]> {
  if (family.plans.length === 0) return [];
  const views = new Map(finals.flatMap((f) => (f.view ? [[f.id, f.view] as const] : [])));
  const histories = new Map(finals.map((f) => [f.id, f.events] as const));
  const listings = new Map<string, IndexRow[] | null>();
  for (const plan of family.plans) listings.set(plan.id, (await listChildren(client, plan.id)).rows);
  for (const row of [...listings.values()].flat()) {
    if (!row || views.has(row.id)) continue;
    const view = (await client.getWorkflow(row.id)).value;
    if (view) views.set(row.id, view);
  }
  return judgeChildren({ family, run, views, histories, listings });
}
