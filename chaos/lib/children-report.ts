// The parent/child phase in the report: per parent, its shape, how it and its children ended, how long it took,
// whether the restart caught it mid-flight, and the answers to the soak's cancel.
import { tally } from "./checks/check.ts";
import type { ChildRun } from "./children-driver.ts";
import type { ParentFamily } from "./children.ts";
import type { Final } from "./finals.ts";
import type { Outage } from "./restart.ts";

export interface ParentFigures {
  id: string;
  shape: string;
  status: string | null;
  durationMs: number | null;
  /** Its children by final status. */
  children: Record<string, number>;
  /** Started before the kill and ended after Shepherd was back. */
  spannedRestart: boolean;
  cancelAnswers: number[];
  /** The soak's cancel waited for the restart to be over. */
  cancelAfterRestart: boolean;
  /** When the cancel was sent, since the parent's creation. */
  cancelAtMs: number | null;
}

export function childReport(family: ParentFamily, run: ChildRun, finals: readonly Final[], outage: Outage | null): ParentFigures[] {
  const viewOf = (id: string) => finals.find((f) => f.id === id)?.view ?? null;
  return family.plans.map((plan) => {
    const view = viewOf(plan.id);
    const record = run.records.find((r) => r.id === plan.id);
    return {
      id: plan.id,
      shape: plan.shape,
      status: view?.status ?? null,
      durationMs: view?.endedAt === undefined ? null : view.endedAt - view.createdAt,
      children: tally(plan.children.map((id) => viewOf(id)?.status ?? "unread")),
      spannedRestart: Boolean(view && outage && view.createdAt < outage.from && (view.endedAt ?? Infinity) > outage.to),
      cancelAnswers: record?.cancelAnswers ?? [],
      cancelAfterRestart: plan.cancelAfterRestart,
      cancelAtMs: view && record?.cancelSentAt ? record.cancelSentAt - view.createdAt : null,
    };
  });
}

const counts = (obj: Readonly<Record<string, number>>): string => Object.entries(obj).map(([k, n]) => `${k} ${n}`).join(", ") || "none";

/** The console's rows: the phase in one line, then one per parent. */
export function childRows(parents: readonly ParentFigures[]): [string, string][] {
  if (parents.length === 0) return [["parent/child phase (case 28)", "none (--parents 0)"]];
  const children = parents.reduce((n, p) => n + Object.values(p.children).reduce((a, b) => a + b, 0), 0);
  const caught = parents.filter((p) => p.spannedRestart).length;
  const rows: [string, string][] = [["parent/child phase (case 28)", `${parents.length} parent(s), ${children} children; ${caught} caught mid-flight by the restart`]];
  for (const p of parents) {
    const took = p.durationMs === null ? "not ended" : `${(p.durationMs / 1000).toFixed(1)} s`;
    const at = p.cancelAtMs === null ? "" : ` at +${(p.cancelAtMs / 1000).toFixed(1)} s`;
    const cancel = p.cancelAnswers.length ? `; cancel${p.cancelAfterRestart ? " after the restart" : ""}${at} answered ${p.cancelAnswers.join(", ")}` : "";
    rows.push([`  ${p.id}`, `${p.shape}: ${p.status ?? "unread"} in ${took}${p.spannedRestart ? " (across the restart)" : ""}; children ${counts(p.children)}${cancel}`]);
  }
  return rows;
}
