import type { HandOff } from "../../agents/host-shard";
import type { ChildWorkflowEvent, EndNoticeEvent } from "../../domain/machine";

/** The workflow an outbox delivers for, as the commit named it: a delivery need not load the state again. */
export interface DeliveredFor {
  tenant: string;
  id: string;
  name: string;
  /** A start's commit or the supervisor's tick: attempts go straight to an agent host that takes them (see HandOff). */
  handOff?: HandOff;
  /**
   * The supervisor's tick (the alarm) delivers: what waits on a receiver outside Shepherd (the end's notice) goes only
   * then, so no call that ends a workflow (an agent's report, an operator's terminate) waits for that receiver.
   */
  byAlarm?: boolean;
}

/** The workflow's own object, as a delivery sees it: what came of a delivery is recorded there as an event. */
export interface OwnObject {
  record(event: ChildWorkflowEvent | EndNoticeEvent): Promise<unknown>;
}

/** One kind of outbox row's way out (see outbox.ts): each reads and settles its own rows. */
export interface Delivery {
  /** When the alarm must deliver next; undefined when nothing waits. A row due now is the caller's to deliver. */
  nextAttemptAt(now: number): number | undefined;
  /** Delivers what is due; false when something failed or moved its time, and now waits for the alarm. */
  deliver(workflow: DeliveredFor): Promise<boolean>;
}
