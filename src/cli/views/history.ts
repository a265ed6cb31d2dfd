import type { Diagnosis, HistoryEvent, HistoryPage } from "../api-types";
import { compactJson, fields, relative, table, time } from "../format";

/**
 * `shepherd history`: one row per event, in order, and how to get the next page. Who acted on an operator's
 * event (and why, when they said) has a column of its own, out of the data, so it is never cut off.
 */
export function historyLines(page: HistoryPage): string[] {
  const rows = page.events.map((event) => {
    const { by, rest } = actedBy(event.data);
    return [String(event.seq), time(event.at), event.type, eventStep(event), by, rest === undefined ? "" : compactJson(rest, 90)];
  });
  return [...table(["SEQ", "AT", "TYPE", "STEP", "BY", "DATA"], rows), ...(page.nextAfter === undefined ? [] : [`more: --after ${page.nextAfter}`])];
}

/** `alice: "ticket 42"` from an event's `actor` and `reason`, and the rest of its data. */
function actedBy(data: unknown): { by: string; rest: unknown } {
  if (typeof data !== "object" || data === null || !("actor" in data)) return { by: "", rest: data };
  const { actor, reason, ...rest } = data as { actor: unknown; reason?: unknown };
  const by = `${String(actor)}${typeof reason === "string" ? `: ${JSON.stringify(reason)}` : ""}`;
  return { by, rest: Object.keys(rest).length === 0 ? undefined : rest };
}

function eventStep(event: HistoryEvent): string {
  if (event.stepId === undefined) return "";
  return event.attempt === undefined ? event.stepId : `${event.stepId}#${event.attempt}`;
}

/** `shepherd diagnose`: healthy or not and why, what it waits for, its next deadline, and the supervisor's decisions. */
export function diagnosisLines(diagnosis: Diagnosis, now: number): string[] {
  const next = diagnosis.nextDeadline;
  const lines = fields([
    ["status", diagnosis.status],
    ["healthy", diagnosis.healthy ? "yes" : "NO"],
    ["next deadline", next ? `${next.reason}${next.stepId ? ` (${next.stepId})` : ""} ${relative(next.at, now)}` : "none"],
    ["alarm", diagnosis.alarmAt === null ? "none" : `${time(diagnosis.alarmAt)} (${relative(diagnosis.alarmAt, now)})`],
  ]);
  for (const problem of diagnosis.problems) lines.push(`problem: ${problem}`);
  if (diagnosis.blockedOn.length > 0) {
    const rows = diagnosis.blockedOn.map((blocked) => [blocked.stepId ?? "-", blocked.reason, relative(blocked.since, now), blocked.detail]);
    lines.push("", "blocked on:", ...table(["STEP", "REASON", "SINCE", "DETAIL"], rows));
  }
  const attempts = Object.entries(diagnosis.attempts);
  if (attempts.length > 0) lines.push("", `attempts: ${attempts.map(([step, { used, max }]) => `${step} ${used}/${max}`).join(", ")}`);
  if (diagnosis.recentDecisions.length > 0) {
    lines.push("", "recent decisions (newest first):");
    for (const decision of diagnosis.recentDecisions) lines.push(`  ${decisionLine(decision)}`);
  }
  return lines;
}

/** Decisions are history events; the schema leaves them open, so each field is read with care. */
function decisionLine(decision: unknown): string {
  if (typeof decision !== "object" || decision === null) return compactJson(decision);
  const { at, type, stepId } = decision as { at?: unknown; type?: unknown; stepId?: unknown };
  return [typeof at === "number" ? time(at) : "", String(type ?? "?"), typeof stepId === "string" ? stepId : ""].filter(Boolean).join("  ");
}
