// Evidence for a failed check: the workflows it names, each as one timeline that interleaves the engine's
// history with what the remote saw, in ms from the workflow's start. Enough to tell a bug from bad luck and
// to write its reproduction without rerunning the soak.
import { isRecord } from "./api-shapes.ts";
import type { Check } from "./checks/check.ts";
import type { Final } from "./finals.ts";
import type { RemoteStats } from "./remote-ledger.ts";
import type { Outage } from "./restart.ts";

/** A workflow's story: its engine events and what the remote saw, merged, in ms from its start. */
export interface Timeline {
  id: string;
  status: string | null;
  error: string | undefined;
  timeline: string[];
}

/**
 * Workflow ids the failed checks name (`id` fields), up to `perCheck` from each, keeping only those
 * `exists` accepts: a workflow that never started has no story to tell.
 */
export function idsNamedBy(checks: readonly Check[], exists: (id: string) => boolean, perCheck = 2): string[] {
  const ids: string[] = [];
  for (const check of checks) {
    if (check.status !== "fail") continue;
    const found: string[] = [];
    const visit = (value: unknown, key?: string): void => {
      if (found.length >= perCheck || key === "notStarted") return;
      if (Array.isArray(value)) return value.forEach((v) => visit(v));
      if (!isRecord(value)) return;
      if (typeof value.id === "string" && exists(value.id) && !ids.includes(value.id) && !found.includes(value.id)) found.push(value.id);
      for (const [k, v] of Object.entries(value)) visit(v, k);
    };
    visit(check.data);
    ids.push(...found);
  }
  return ids;
}

/** One merged timeline per workflow: `+ms engine <event>` and `+ms remote <key> attempt n: outcome`. */
export function timelines(ids: readonly string[], finals: readonly Final[], remoteStats: RemoteStats, outage: Outage | null): Timeline[] {
  return ids.map((id) => {
    const final = finals.find((f) => f.id === id);
    const events = final?.events ?? [];
    const origin = events[0]?.at ?? final?.view?.createdAt ?? 0;
    const lines = events.map((e) => ({
      at: e.at,
      text: `engine ${e.type}${e.stepId ? ` ${e.stepId}#${e.attempt}` : ""}${e.data ? ` ${JSON.stringify(e.data).slice(0, 200)}` : ""}`,
    }));
    for (const record of Object.values(remoteStats.keys)) {
      if (record.workflowId !== id) continue;
      for (const entry of record.log) lines.push({ at: entry.at, text: `remote ${record.key} attempt ${entry.attempt}: ${entry.outcome}` });
    }
    if (outage) {
      lines.push({ at: outage.from, text: "harness: Shepherd killed" }, { at: outage.to, text: "harness: Shepherd healthy again" });
    }
    lines.sort((a, b) => a.at - b.at);
    const first = lines.findIndex((l) => l.at >= origin);
    return {
      id,
      status: final?.view?.status ?? null,
      error: final?.view?.error?.message,
      // Restart markers before the workflow started are noise.
      timeline: lines.slice(Math.max(0, first)).map((l) => `+${l.at - origin} ${l.text}`),
    };
  });
}
