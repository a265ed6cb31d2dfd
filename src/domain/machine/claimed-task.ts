import type { Action, HttpAction } from "../language/schemas";
import type { BreakerSettings } from "../breaker/settings";
import type { Attempt } from "./state";
import type { StatusRules } from "./remote-outcome";

/** What an agent needs to perform one attempt. */
export interface ClaimedTask {
  workflowId: string;
  stepId: string;
  attempt: number;
  kind: Attempt["kind"];
  action: Action;
  idempotencyKey: string;
  /** When the attempt's start-to-close deadline passes; the agent aborts its request then. */
  deadlineAt: number;
  startToCloseMs: number;
  heartbeatMs: number;
  /** The last heartbeat details of any earlier attempt, so a retry can resume. */
  progress?: unknown;
  /** The task token the remote gets, minted by the object that claimed it (valid until deadlineAt plus a grace). */
  token?: string;
  /** Set when the attempt before had no answer: ask this first, and send the action only if the effect is not there. */
  verify?: HttpAction;
  /** The host whose breaker this attempt answers to (see `breakerHostOf`), and the step's breaker settings. */
  host?: string;
  breaker?: BreakerSettings;
  /** The attempt after a parking: the agent asks the breaker and reports to it, whatever it remembers. */
  afterParking?: true;
  /** The step's `retry` status lists, for an `http` action's answer (only when the step sets one). */
  statusRules?: StatusRules;
}
