/**
 * How agents reach a host's breaker, and what it answers. Kept apart from the object's class so the agents
 * depend on these shapes only (the breaker itself calls the agent hosts when it opens or closes).
 */
import type { BreakerSettings } from "../domain/breaker/settings";
import type { CircuitState } from "../domain/breaker/machine";

/** One attempt's report to its host's breaker, with the settings of the step it belongs to. */
export interface BreakerCall {
  tenant: string;
  host: string;
  settings: BreakerSettings;
  workflowId: string;
  stepId: string;
  attempt: number;
}

/** What an agent keeps of a breaker between calls. */
export interface BreakerReply {
  state: CircuitState;
  failures: number;
  openUntil?: number;
}

export type FailureReply = BreakerReply & { openedNow: boolean };
export type AdmitReply = BreakerReply & { admitted: boolean };

/** What a breaker tells every agent host when it opens or closes. */
export type BreakerNotice = BreakerReply & { tenant: string; host: string };

export interface BreakerRpc {
  /** A transient failure (5xx, 408, 429, a network error, the deadline); `openedNow` when this one opened it. */
  recordFailure(call: BreakerCall): Promise<FailureReply>;
  /** The host answered: resets the count, and closes an open or half-open breaker. */
  recordSuccess(call: BreakerCall): Promise<BreakerReply>;
  /** Asked before calling a host the agent believes open: not admitted means parked, released when it closes. */
  admit(call: BreakerCall): Promise<AdmitReply>;
}

/** One breaker per tenant and host: a newline can be in neither. */
export function breakerName(tenant: string, host: string): string {
  return `${tenant}\n${host}`;
}

export function breakerFor(env: Env, tenant: string, host: string): BreakerRpc {
  return env.BREAKERS.getByName(breakerName(tenant, host)) as unknown as BreakerRpc;
}
