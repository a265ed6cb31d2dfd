// When the regular driver sends a language workflow's event (lib/language.ts deals the modes): early, at once
// after the start, while the first action (and the sleep after it) still run, so the inbox has to keep it; or
// late, once the view shows the wait step waiting, and while a restart is due or under way only after it, so
// the wait spans the crash. Each mode is sent once more with the same id when the plan says so.
import type { ShepherdClient } from "./client.ts";
import type { SoakWorkflow } from "./definitions.ts";
import type { ViewHandler } from "./follow.ts";
import { sendEvent, SLEEP_STEP, WAIT_STEP } from "./language.ts";
import type { LanguagePlan, LanguageRecord } from "./language.ts";

export interface EventTiming {
  client: ShepherdClient;
  deadline: number;
  /** Whether a restart is due or under way: late events wait for its end. */
  restartPending: () => boolean;
}

/** Sends an early event now; for a late one, returns what the follower calls with each reading to send it in time. */
export async function eventSender(wf: SoakWorkflow, plan: LanguagePlan, record: LanguageRecord, timing: EventTiming): Promise<ViewHandler | undefined> {
  const send = async (): Promise<void> => {
    const first = await sendEvent(timing.client, wf.id, plan.event, record, { phase: "first", deadline: timing.deadline });
    if (plan.event.duplicate && first.status >= 200 && first.status < 300) await sendEvent(timing.client, wf.id, plan.event, record, { phase: "duplicate", deadline: timing.deadline });
  };
  if (plan.event.timing === "early") {
    await send();
    return undefined;
  }
  let sent = false;
  return async (view) => {
    if (sent) return undefined;
    const step = view.steps?.find((s) => s.id === WAIT_STEP);
    if (step?.status !== "waiting") return view.steps?.find((s) => s.id === SLEEP_STEP)?.status === "sleeping" ? "poll soon" : undefined;
    record.waitingSeenAt ??= Date.now();
    if (timing.restartPending()) {
      record.heldForRestart = true;
      return "poll soon";
    }
    sent = true;
    await send();
    return "poll soon";
  };
}
