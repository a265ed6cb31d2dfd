import { isTerminal, type WorkflowState, type WorkflowStatus } from "./state";
import type { WorkflowMetrics } from "./metrics";

/** A workflow as the cross-workflow index (D1) knows it: enough to list, filter and find overdue ones. */
export interface IndexEntry {
  tenant: string;
  id: string;
  name: string;
  status: WorkflowStatus;
  createdAt: number;
  updatedAt: number;
  endedAt?: number;
  /** The object's earliest deadline when the entry was written; the sweep's safety net reads it. */
  nextDeadlineAt?: number;
  /** The state's version: the index never moves back to an older one. */
  version: number;
  /** The workflow's counters as of this version (absolute, so writing an entry twice counts nothing twice). */
  metrics?: WorkflowMetrics;
}

/**
 * An open workflow with no deadline (one waiting on an operator) is still given one in the index, an hour on,
 * so the sweep looks at it now and then: if the object ended it but crashed before its index write, that is
 * how the index catches up. Waking a healthy one only refreshes this date.
 */
export const INDEX_WATCHDOG_MS = 60 * 60 * 1000;

/**
 * A workflow the sweep woke is indexed at least this far ahead. Its alarm was just set again, so the safety net
 * need not look at it sooner; without this lease a healthy workflow whose next deadline is always near (a
 * heartbeat, the next step's) would be woken by every sweep. A second lost alarm is found this much later.
 */
export const WOKEN_INDEX_LEASE_MS = 10 * 60 * 1000;

export function indexEntryOf(state: WorkflowState, nextDeadlineAt: number | undefined): IndexEntry {
  const open = !isTerminal(state.status);
  return {
    tenant: state.tenant,
    id: state.id,
    name: state.name,
    status: state.status,
    createdAt: state.createdAt,
    updatedAt: state.updatedAt,
    ...(state.endedAt === undefined ? {} : { endedAt: state.endedAt }),
    ...(open ? { nextDeadlineAt: nextDeadlineAt ?? state.updatedAt + INDEX_WATCHDOG_MS } : {}),
    version: state.version,
    ...(state.metrics === undefined ? {} : { metrics: state.metrics }),
  };
}

/**
 * How far the object's deadline may drift from the indexed one before the entry is written again. Steps move it
 * by seconds or minutes, which the index can ignore; a sleep or a wait moves it by hours or days: past this,
 * the sweep would wake a sleeping workflow for nothing, or miss a lost alarm for as long as the sleep was.
 */
export const INDEX_DEADLINE_DRIFT_MS = INDEX_WATCHDOG_MS;

/**
 * The index is written when a workflow starts and when its status changes, not on every step: a listing
 * only shows status, and per-step writes would put D1 on every step's path. It is also written when the
 * deadline moved far from the indexed one (see INDEX_DEADLINE_DRIFT_MS).
 */
export function indexNeedsEntry(previous: WorkflowState | undefined, next: WorkflowState, nextDeadlineAt: number | undefined): boolean {
  if (previous === undefined || previous.status !== next.status) return true;
  const indexed = next.indexedDeadlineAt;
  if (isTerminal(next.status) || indexed === undefined) return false;
  const deadline = nextDeadlineAt ?? next.updatedAt + INDEX_WATCHDOG_MS;
  return Math.abs(deadline - indexed) > INDEX_DEADLINE_DRIFT_MS;
}
