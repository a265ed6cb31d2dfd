import { isTerminal, type WorkflowState, type WorkflowStatus } from "./state";
import type { WorkflowMetrics } from "./metrics";

/**
 * What the list shows of an open workflow worth a look (made by triage.ts from the diagnosis): one line of why, the
 * step it is about, that step's attempts and when the supervisor next acts on it.
 */
export interface Triage {
  /** One line of plain words: why it is open. */
  summary: string;
  /** The step the line is about. */
  stepId?: string;
  /**
   * That step's attempts: `used` counts the attempt the line is about (a retry waiting out its backoff included, so
   * the figure stays the same once it starts), `max` is its retry policy's maxAttempts.
   */
  attempts?: { used: number; max: number };
  /** When the supervisor next acts on what the line names (a retry, a wait's timeout, an escalation's default). */
  nextDeadlineAt?: number;
}

/** A workflow as the cross-workflow index (D1) knows it: enough to list, filter and find overdue ones. */
export interface IndexEntry {
  tenant: string;
  id: string;
  name: string;
  status: WorkflowStatus;
  createdAt: number;
  updatedAt: number;
  endedAt?: number;
  /** Until when the object promises to have run again (its lease, see INDEX_LEASE_MS); the sweep reads it. */
  nextDeadlineAt?: number;
  /** The workflow whose step started it, for `GET /v1/workflows?parentId=`. */
  parentId?: string;
  /** A delayed start's time, for the list to show when a scheduled workflow starts. */
  startAt?: number;
  /** The state's version: the index never moves back to an older one. */
  version: number;
  /** The workflow's counters as of this version (absolute, so writing an entry twice counts nothing twice). */
  metrics?: WorkflowMetrics;
  /** Why an open workflow is worth a look, for the list (triage.ts); absent when it is simply running, or ended. */
  triage?: Triage;
}

/**
 * An open workflow with no deadline (one waiting on an operator) is still given one in the index, an hour on,
 * so the sweep looks at it now and then: if the object ended it but crashed before its index write, that is
 * how the index catches up. Waking a healthy one only refreshes this date.
 */
export const INDEX_WATCHDOG_MS = 60 * 60 * 1000;

/**
 * The index holds a lease, not the object's every deadline: an open workflow is indexed at least this far
 * ahead, and the object renews the lease when it runs low (see indexNeedsEntry). Writing every step's deadline
 * would put D1 on every step's path; writing only the first one makes every healthy workflow older than it look
 * overdue to the sweep. So a workflow that ends within the lease costs two index writes (start and end), one that
 * runs longer one more per half lease, and the sweep wakes only a workflow whose object stopped running: a lost
 * alarm is found within the lease (plus the sweep's grace), not sooner.
 */
export const INDEX_LEASE_MS = 10 * 60 * 1000;

/**
 * The entry to write; `indexedAt` (see indexedDeadlineOf) is kept only while the workflow is open, and `triage`
 * (triageOf's, for the state) only while it is worth a look.
 */
export function indexEntryOf(state: WorkflowState, indexedAt: number, triage?: Triage): IndexEntry {
  const open = !isTerminal(state.status);
  return {
    tenant: state.tenant,
    id: state.id,
    name: state.name,
    status: state.status,
    createdAt: state.createdAt,
    updatedAt: state.updatedAt,
    ...(state.endedAt === undefined ? {} : { endedAt: state.endedAt }),
    ...(open ? { nextDeadlineAt: indexedAt } : {}),
    ...(state.parent ? { parentId: state.parent.id } : {}),
    ...(state.startAt === undefined ? {} : { startAt: state.startAt }),
    version: state.version,
    ...(state.metrics === undefined ? {} : { metrics: state.metrics }),
    ...(triage === undefined ? {} : { triage }),
  };
}

/** When the object will next run by itself: its next deadline, or the watchdog date of a workflow with none. */
function nextRunAt(state: WorkflowState, deadline: number | undefined): number {
  return deadline ?? state.updatedAt + INDEX_WATCHDOG_MS;
}

/** The date an entry written now carries: the object's next run, but never less than a lease ahead. */
export function indexedDeadlineOf(state: WorkflowState, deadline: number | undefined, now: number): number {
  return Math.max(nextRunAt(state, deadline), now + INDEX_LEASE_MS);
}

/**
 * How much later than needed the indexed date may be before the entry is written again. A sleep or a wait that
 * ends early (an event came) leaves the index promising a run days away: past this, a lost alarm would go
 * unnoticed that long.
 */
export const INDEX_DEADLINE_DRIFT_MS = INDEX_WATCHDOG_MS;

/**
 * The index is written when a workflow starts and when its status changes (a listing shows status), and when
 * its lease needs renewing: it would lapse before the object's next run, or within half a lease (so a workflow
 * whose deadlines are always near renews once per half lease, not per step). It is also written when the
 * indexed date promises far too late a run (see INDEX_DEADLINE_DRIFT_MS).
 */
export function indexNeedsEntry(previous: WorkflowState | undefined, next: WorkflowState, deadline: number | undefined, now: number): boolean {
  if (previous === undefined || previous.status !== next.status) return true;
  const indexed = next.indexedDeadlineAt;
  if (isTerminal(next.status) || indexed === undefined) return false;
  if (indexed < Math.max(nextRunAt(next, deadline), now + INDEX_LEASE_MS / 2)) return true;
  return indexed - indexedDeadlineOf(next, deadline, now) > INDEX_DEADLINE_DRIFT_MS;
}

/**
 * The list's line moved since the index was last given one: the workflow entered or left a state worth attention
 * (a retry, a wait for an event, an escalation, a pause, a parked step …), or moved within one (the next retry).
 * Never on the happy path, where there is no line (see triage.ts), so a workflow whose steps succeed first time
 * writes its entry as often as it did before the list had lines.
 */
export function indexSummaryMoved(state: WorkflowState, triage: Triage | undefined): boolean {
  return triage?.summary !== state.indexedSummary;
}
