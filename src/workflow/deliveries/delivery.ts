import type { HandOff } from "../../agents/host-shard";

/** The workflow an outbox delivers for, as the commit named it: a delivery need not load the state again. */
export interface DeliveredFor {
  tenant: string;
  id: string;
  name: string;
  /** A start's commit or the supervisor's tick: attempts go straight to an agent host that takes them (see HandOff). */
  handOff?: HandOff;
}

/** One kind of outbox row's way out (see outbox.ts): each reads and settles its own rows. */
export interface Delivery {
  /** When the alarm must deliver next; undefined when nothing waits. A row due now is the caller's to deliver. */
  nextAttemptAt(now: number): number | undefined;
  /** Delivers what is due; false when something failed or moved its time, and now waits for the alarm. */
  deliver(workflow: DeliveredFor): Promise<boolean>;
}
