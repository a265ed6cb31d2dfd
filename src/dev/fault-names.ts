/** The faults the dev/test configuration can inject (see faults.ts); a module of its own so Node tools can read the names. */
export const FAULT_NAMES = [
  /** The agent claims its attempt, then does nothing: no request, no heartbeat, no report. */
  "agentDiesAfterClaim",
  /** The agent performs the attempt but sends no heartbeats. */
  "dropHeartbeats",
  /** The object resets (`ctx.abort()`) right after persisting a transition and its alarm, before its sends. */
  "abortAfterPersist",
  /** The alarm handler throws before doing anything. */
  "alarmThrows",
  /** Sending task messages to the queue fails. */
  "enqueueFails",
  /** Writing the index entry to D1 fails. */
  "indexWriteFails",
  /** The queue consumer throws out of its batch, leaving the messages it had not acked for redelivery. */
  "consumerThrows",
  /** The object resets (`ctx.abort()`) after a `workflow` step's child was started, before it recorded the start. */
  "abortAfterChildStart",
  /** A bulk job's object resets (`ctx.abort()`) right after a workflow accepted its action, before the job recorded it. */
  "abortAfterBulkAction",
] as const;

export type FaultName = (typeof FAULT_NAMES)[number];
