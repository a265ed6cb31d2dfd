/**
 * How many start requests each tenant and workflow name has in progress in this isolate. A start costs the runtime
 * far more than the request that asks for it (the object's first commit, the index row, the first attempts handed
 * off), so dozens of clients starting one name in a loop fill the one thread every object of the isolate shares,
 * and a quiet tenant's steps wait seconds behind that work although the task queue never falls behind. Capping
 * each tenant and name's starts in progress bounds that queue of work; throughput does not suffer, since a busy
 * thread runs no faster for more work waiting on it. A start below the cap (another tenant's, one a second; the
 * same tenant's nightly job beside its batch) never notices it. Only the front door's starts are capped: their
 * clients retry a 429, and a schedule's fire, a child or a queued start message is never refused by it.
 */
import { tenantStartsInFlight } from "../config";
import type { StartWorkflowInput } from "../domain/language/definition";
import { fairShareSlot, type FairShareKey } from "../domain/admission/fair-share";
import { startWorkflowRun, type StartOutcome } from "./start-workflow";

/** How long a start refused at the cap waits: about as long as a start takes on a busy runtime. */
export const IN_FLIGHT_RETRY_AFTER_SECONDS = 1;

/** A start refused because its tenant and name already have `cap` in progress: nothing was stored. */
export interface StartsInFlightRefusal {
  ok: false;
  code: "starts_in_flight";
  message: string;
  retryAfterSeconds: number;
}

/** Counts of starts in progress, by tenant and name. */
export class StartsInFlight {
  private readonly counts = new Map<string, number>();

  /** Counts a start of `key` in, unless it already has `cap` in progress (then it must wait). */
  tryEnter(key: FairShareKey, cap: number): boolean {
    const slot = fairShareSlot(key);
    const count = this.counts.get(slot) ?? 0;
    if (count >= cap) return false;
    this.counts.set(slot, count + 1);
    return true;
  }

  leave(key: FairShareKey): void {
    const slot = fairShareSlot(key);
    const count = (this.counts.get(slot) ?? 1) - 1;
    if (count > 0) this.counts.set(slot, count);
    else this.counts.delete(slot);
  }

  inProgress(key: FairShareKey): number {
    return this.counts.get(fairShareSlot(key)) ?? 0;
  }
}

/** This isolate's starts in progress (module state lives as long as the isolate). */
const startsInFlight = new StartsInFlight();

/**
 * A start asked for over HTTP (`POST /v1/workflows` and each item of a batch): `startWorkflowRun`, unless its
 * tenant and name already have TENANT_STARTS_IN_FLIGHT starts in progress here.
 */
export async function startFromFrontDoor(env: Env, tenant: string, body: StartWorkflowInput): Promise<StartOutcome | StartsInFlightRefusal> {
  const cap = tenantStartsInFlight(env);
  if (cap === 0) return startWorkflowRun(env, tenant, body);
  const key = { tenant, name: body.definition?.name ?? body.definitionRef?.name ?? "" };
  if (!startsInFlight.tryEnter(key, cap)) {
    const message = `${cap} starts of "${key.name}" are already in progress for this tenant; nothing was started: retry after ${IN_FLIGHT_RETRY_AFTER_SECONDS} second.`;
    return { ok: false, code: "starts_in_flight", message, retryAfterSeconds: IN_FLIGHT_RETRY_AFTER_SECONDS };
  }
  try {
    return await startWorkflowRun(env, tenant, body);
  } finally {
    startsInFlight.leave(key);
  }
}
