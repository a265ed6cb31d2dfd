// A workflow only the sweep can move: its first task message is held back (by the test) and its alarm is lost.
import { runInDurableObject } from "cloudflare:test";
import { PATIENT } from "./policies";
import { REMOTE } from "./remote";
import { schedulerStub } from "./scheduler";

/** One step against the remote, under patient policies with the given schedule-to-start. */
export function strandedDefinition(scheduleToStartMs: number) {
  return {
    name: "stranded",
    defaults: { ...PATIENT, timeouts: { ...PATIENT.timeouts, scheduleToStartMs } },
    steps: [{ id: "only", action: { type: "http", url: `${REMOTE}/only` } }],
  };
}

/** Deletes the object's alarm, as a lost alarm would leave it. */
export function loseAlarm(id: string): Promise<void> {
  return runInDurableObject(schedulerStub(id), (_instance, state) => state.storage.deleteAlarm());
}
