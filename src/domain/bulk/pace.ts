/**
 * How fast a bulk job goes. It is one object working through its matches a slice at a time, from its alarm, with a
 * gap between slices: whatever the number of workflows it matched, it holds at most BULK_CONCURRENCY calls to
 * workflow objects at once and makes at most BULK_ACTIONS_PER_ALARM of them per slice, so the front door (which
 * shares the Worker and the workflow objects with it) and other tenants see a steady trickle, never a burst. At
 * this pace one job acts on at most about 100 workflows a second, so 2 000 take at least 20 s (under `wrangler dev`
 * on a loaded 2-core machine, where each call takes longer, about 20 a second).
 */

/** Index rows read per page (the list route's own maximum). */
export const BULK_PAGE_SIZE = 100;
/**
 * Pages read per alarm while the job finds its workflows: reads of one indexed query each, far cheaper than the
 * actions, so a job of thousands knows its `matched` within a few slices.
 */
export const BULK_PAGES_PER_ALARM = 5;
/** Workflows acted on per alarm. */
export const BULK_ACTIONS_PER_ALARM = 20;
/** Actions in flight at once within one alarm. */
export const BULK_CONCURRENCY = 5;
/** The gap between one alarm's end and the next one's start. */
export const BULK_GAP_MS = 200;
/**
 * Set before each alarm's work, so that an alarm that dies part way (its object reset) runs again this soon,
 * rather than after the platform's backoff.
 */
export const BULK_LEASE_MS = 1_000;
/**
 * How far before an action's own record its mark may be stamped in the workflow's history and still count as that
 * action's (clocks of two objects differ a little): see marks.ts.
 */
export const BULK_CLOCK_SLACK_MS = 1_000;
/**
 * Calls on one workflow that may end without an answer (its object unreachable or reset) before it counts as
 * failed: each is settled by reading the workflow's history before the next, so a retry never doubles an action.
 */
export const BULK_MAX_TRIES = 5;
