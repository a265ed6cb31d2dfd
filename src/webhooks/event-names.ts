/**
 * What outbound events are called, and which of them a subscription's filters pick. A history type becomes an
 * event name by making its first underscore a dot: `workflow_completed` → `workflow.completed`,
 * `step_timed_out` → `step.timed_out`. A filter is an exact name, a prefix with `.*` (`step.*`) or `*`.
 */
import { HISTORY_EVENT_TYPES } from "../domain/machine/history";

export function eventNameOf(historyType: string): string {
  return historyType.replace("_", ".");
}

/** Every name an event can have, from the history's own list of types. */
export const EVENT_NAMES: readonly string[] = HISTORY_EVENT_TYPES.map(eventNameOf);

const PREFIXES = [...new Set(EVENT_NAMES.map((name) => name.slice(0, name.indexOf("."))))];

/** The form of a filter; whether it names a real event is `filterProblem`'s question. */
export const FILTER_PATTERN = /^(\*|[a-z]+\.(\*|[a-z_]+))$/;

export function filterMatches(filter: string, name: string): boolean {
  if (filter === "*") return true;
  if (filter.endsWith(".*")) return name.startsWith(filter.slice(0, -1));
  return filter === name;
}

export function matchesAnyFilter(filters: readonly string[], name: string): boolean {
  return filters.some((filter) => filterMatches(filter, name));
}

/** Why a filter could never match (a misspelt name would otherwise subscribe to nothing, silently). */
export function filterProblem(filter: string): string | undefined {
  if (EVENT_NAMES.some((name) => filterMatches(filter, name))) return undefined;
  return `"${filter}" matches no event: use a name such as workflow.completed, one of ${PREFIXES.map((prefix) => `${prefix}.*`).join(", ")}, or *`;
}
