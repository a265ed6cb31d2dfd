// What every check returns, as Temporal's omes harness and Restate's Jepsen suite report theirs: a name, a
// verdict, one line of detail for the table, and the data behind it for latest.json.

export type CheckStatus = "pass" | "fail" | "skipped";

/** The data behind a verdict: lists of what went wrong (each cut to a few dozen) and the figures. */
export type CheckData = Record<string, unknown>;

export interface Check {
  name: string;
  status: CheckStatus;
  detail: string;
  data: CheckData | undefined;
}

/** One thing a check found wrong: what (`kind`) and the facts that show it. */
export type Violation = { kind: string } & Record<string, unknown>;

/** Adds one violation, with what names it. */
export type Report = (kind: string, extra?: Record<string, unknown>) => void;

export const pass = (name: string, detail: string, data?: CheckData): Check => ({ name, status: "pass", detail, data });
export const fail = (name: string, detail: string, data?: CheckData): Check => ({ name, status: "fail", detail, data });
export const skipped = (name: string, detail: string, data?: CheckData): Check => ({ name, status: "skipped", detail, data });

/** How many of each key, as the report's counts: `{completed: 28, failed: 1}`. */
export function tally(keys: Iterable<string>): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const key of keys) counts[key] = (counts[key] ?? 0) + 1;
  return counts;
}
