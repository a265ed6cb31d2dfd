// The map phase in the report: per map workflow, its size, how long it took, whether the restart caught it mid-map
// (and how far it had got), its items' attempts, the faults the remote injected into its items and its largest answer.
import type { SoakWorkflow } from "./definitions.ts";
import type { Final } from "./finals.ts";
import { plannedItems } from "./map.ts";
import type { MapRecord } from "./map-driver.ts";
import type { RemoteStats } from "./remote-ledger.ts";
import type { Outage } from "./restart.ts";

export interface MapFigures {
  id: string;
  items: number;
  status: string | null;
  durationMs: number | null;
  /** Started before the kill and ended after Shepherd was back. */
  spannedRestart: boolean;
  /** Items succeeded at the driver's last reading before the kill (null: none read before it). */
  succeededAtKill: number | null;
  /** Items by the attempt they succeeded on: `{1: 380, 2: 20}`. */
  attempts: Record<string, number>;
  /** What the remote did with the items' requests: faults injected (itemHttp503, itemHang) and replays. */
  remote: Record<string, number>;
  maxAnswerBytes: number;
}

export function mapReport(workflows: readonly SoakWorkflow[], records: readonly MapRecord[], finals: readonly Final[], remoteStats: RemoteStats, outage: Outage | null): MapFigures[] {
  const remoteByWorkflow = remoteFigures(remoteStats);
  return workflows.map((wf) => {
    const record = records.find((r) => r.id === wf.id);
    const view = finals.find((f) => f.id === wf.id)?.view ?? null;
    const spannedRestart = Boolean(view && outage && view.createdAt < outage.from && (view.endedAt ?? Infinity) > outage.to);
    const beforeKill = outage ? record?.readings.filter((r) => r.at < outage.from).at(-1) : undefined;
    const attempts: Record<string, number> = {};
    for (const item of record?.items ?? []) attempts[item.attempt] = (attempts[item.attempt] ?? 0) + 1;
    return {
      id: wf.id,
      items: plannedItems(wf).length,
      status: view?.status ?? null,
      durationMs: view?.endedAt === undefined ? null : view.endedAt - view.createdAt,
      spannedRestart,
      succeededAtKill: spannedRestart ? (beforeKill?.items?.succeeded ?? null) : null,
      attempts,
      remote: remoteByWorkflow.get(wf.id) ?? {},
      maxAnswerBytes: Math.max(0, ...(record?.readings.map((r) => r.bytes) ?? [])),
    };
  });
}

/** Per workflow, the faults its items got and the replays the remote answered. */
function remoteFigures(remoteStats: RemoteStats): Map<string, Record<string, number>> {
  const byWorkflow = new Map<string, Record<string, number>>();
  for (const record of Object.values(remoteStats.keys)) {
    if (record.item === null) continue;
    const figures = byWorkflow.get(record.workflowId) ?? {};
    for (const [fault, n] of Object.entries(record.faults)) figures[fault] = (figures[fault] ?? 0) + n;
    if (record.replays) figures.replays = (figures.replays ?? 0) + record.replays;
    byWorkflow.set(record.workflowId, figures);
  }
  return byWorkflow;
}

const counts = (obj: Readonly<Record<string, number>>): string => Object.entries(obj).map(([k, n]) => `${k} ${n}`).join(", ") || "none";

/** The console's rows: the phase in one line, then one per map. */
export function mapRows(maps: readonly MapFigures[]): [string, string][] {
  if (maps.length === 0) return [["map phase (case 27)", "none (--map-items 0)"]];
  const caught = maps.filter((m) => m.spannedRestart).length;
  const rows: [string, string][] = [["map phase (case 27)", `${maps.length} map workflow(s), ${maps.reduce((n, m) => n + m.items, 0)} items; ${caught} caught mid-map by the restart`]];
  for (const m of maps) {
    const restart = m.spannedRestart ? `, restart at ${m.succeededAtKill ?? "?"}/${m.items} succeeded` : "";
    const took = m.durationMs === null ? "not ended" : `${(m.durationMs / 1000).toFixed(1)} s`;
    rows.push([`  ${m.id}`, `${m.items} items, ${m.status ?? "unread"} in ${took}${restart}; items by attempt ${counts(m.attempts)}; remote: ${counts(m.remote)}; answer max ${(m.maxAnswerBytes / 1024).toFixed(1)} KiB`]);
  }
  return rows;
}
