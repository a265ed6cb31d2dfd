// The soak's share of the workflow language (contract v1.1, "Step kinds" and "Events (signals) and the
// inbox"): a quarter of the regular workflows get a `sleep` step and a `waitForEvent` step (with a `when`
// that is true) after their first action, and the driver sends each one's event early (before the wait
// starts: the inbox must keep it), late (once the view shows the step `waiting`), or twice with the same
// event `id` (the second answer must be the first one, replayed). Which workflows, and how, is decided by
// the seed alone; what was sent and every answer is kept for the checks and the report.
import { sleep } from "../../scripts/lib/async.ts";
import { retryAfterMs } from "../../scripts/lib/http-json.ts";
import { dealt, seededRandom, unitHash } from "./faults.ts";
import type { Answer, ShepherdClient } from "./client.ts";
import type { SoakWorkflow, StepDefinition } from "./definitions.ts";

export type SleepPlan = { mode: "duration"; durationMs: number } | { mode: "until"; aheadMs: number };

export type EventTiming = "early" | "late";

interface EventMode {
  timing: EventTiming;
  duplicate: boolean;
}

export interface EventPlan {
  name: string;
  id: string;
  timing: EventTiming;
  /** Sent a second time with the same id. */
  duplicate: boolean;
  payload: Record<string, unknown>;
}

/** How a workflow of the language sleeps and gets its event. */
export interface LanguagePlan {
  sleep: SleepPlan;
  event: EventPlan;
}

export type SendPhase = "first" | "duplicate";

/** One try of sending the event, with its answer. */
export interface EventSend {
  phase: SendPhase;
  at: number;
  status: number;
  body: unknown;
  error?: string;
}

/** The record the driver keeps per language workflow (also the report's account of what was sent). */
export interface LanguageRecord {
  id: string;
  sleep: SleepPlan;
  event: Omit<EventPlan, "payload">;
  plannedWakeAt: number | null;
  waitingSeenAt: number | null;
  /** A late event kept back until the restart was over, so the wait spans the crash. */
  heldForRestart: boolean;
  sends: EventSend[];
}

/** The share of the regular workflows that use the language. */
export const LANGUAGE_SHARE = 0.25;
export const SLEEP_STEP = "nap";
export const WAIT_STEP = "approval";
export const EVENT_NAME = "approved";
/** Generous: a wait must never time out in the soak (the restart's outage included), so onTimeout "fail". */
export const WAIT_TIMEOUT_MS = 60_000;
const SLEEP_MS = [200, 1_500] as const;
/** `until` is set when the workflow is started: far enough ahead that the sleep usually starts before it. */
const UNTIL_AHEAD_MS = [1_500, 3_000] as const;
/** The modes, dealt round-robin so every one occurs in a small run: early, late, and each sent twice. */
const EVENT_MODES: readonly [EventMode, ...EventMode[]] = [
  { timing: "early", duplicate: false },
  { timing: "late", duplicate: true },
  { timing: "late", duplicate: false },
  { timing: "early", duplicate: true },
];
const SEND_BACKOFF_MS = [250, 2_000] as const;

/**
 * Which of `ids` use the language and how: one in every round(1 / share), evenly spaced from an offset the
 * seed picks (so a run of 30 has 7 or 8, and any few workflows in flight at once include one of them, which
 * the restart needs), while the other workflows are the same as without the language. Map id → plan.
 */
export function languagePlans(seed: string, ids: readonly string[], share: number = LANGUAGE_SHARE): Map<string, LanguagePlan> {
  const every = Math.max(1, Math.round(1 / share));
  const offset = Math.floor(seededRandom(seed, "language")() * every);
  const chosen = ids.filter((_, i) => i % every === offset);
  return new Map(chosen.map((id, i) => [id, languagePlan(seed, id, i)]));
}

/** The i-th chosen workflow's plan: the sleep's mode alternates, the event modes are dealt in turn. */
function languagePlan(seed: string, id: string, i: number): LanguagePlan {
  const draw = (what: string): number => unitHash(seed, id, "language", what);
  const mode = dealt(EVENT_MODES, i);
  const sleep: SleepPlan =
    i % 2 === 0
      ? { mode: "duration", durationMs: SLEEP_MS[0] + Math.floor(draw("sleep") * (SLEEP_MS[1] - SLEEP_MS[0] + 1)) }
      : { mode: "until", aheadMs: UNTIL_AHEAD_MS[0] + Math.floor(draw("sleep") * (UNTIL_AHEAD_MS[1] - UNTIL_AHEAD_MS[0] + 1)) };
  return {
    sleep,
    event: {
      name: EVENT_NAME,
      id: `evt-${id}`,
      timing: mode.timing,
      duplicate: mode.duplicate,
      // A payload with some shape to it, so "exactly the payload sent" means something.
      payload: { approvedBy: "chaos", workflow: id, ticket: Math.floor(draw("ticket") * 1e9), notes: ["early or late", { nested: [1, 2.5, null, true] }] },
    },
  };
}

/** The sleep and wait steps to put after the workflow's first action (`afterStep`). */
export function languageSteps(plan: LanguagePlan, afterStep: string): StepDefinition[] {
  return [
    { id: SLEEP_STEP, sleep: plan.sleep.mode === "duration" ? { durationMs: plan.sleep.durationMs } : { until: "{{ input.wakeAt }}" } },
    {
      id: WAIT_STEP,
      // True whenever it is read: the first action's effect id (the remote always returns one).
      when: `{{ steps.${afterStep}.output.effectId }}`,
      waitForEvent: { event: plan.event.name, timeoutMs: WAIT_TIMEOUT_MS, onTimeout: "fail" },
    },
  ];
}

/** Right before the first start: an `until` sleep gets its wake time in the input (kept for the retries of that start). */
export function prepareStart(wf: SoakWorkflow, record: LanguageRecord): void {
  const sleep = wf.language?.sleep;
  if (sleep?.mode !== "until") return;
  wf.payload.input.wakeAt ??= Date.now() + sleep.aheadMs;
  record.plannedWakeAt = wf.payload.input.wakeAt;
}

/**
 * Sends the workflow's event once (as the client would: a send that got no answer, a 5xx or a 429 is sent
 * again with the same id until `deadline`). Every try is recorded on `record.sends`. Returns the last answer.
 */
export async function sendEvent(client: ShepherdClient, workflowId: string, event: EventPlan, record: LanguageRecord, { phase, deadline }: { phase: SendPhase; deadline: number }): Promise<Answer> {
  const { name, id, payload } = event;
  let backoff: number = SEND_BACKOFF_MS[0];
  for (;;) {
    const at = Date.now();
    const res = await client.sendEvent(workflowId, { event: name, id, payload });
    record.sends.push({ phase, at, status: res.status, body: res.body, error: res.error ?? undefined });
    const retry = res.status === 0 || res.status >= 500 || res.status === 429;
    if (!retry || Date.now() >= deadline) return res;
    const asked = res.status === 429 || res.status === 503 ? retryAfterMs(res.retryAfter) : null;
    const wait = asked ?? backoff;
    backoff = Math.min(SEND_BACKOFF_MS[1], backoff * 2);
    await sleep(Math.max(0, Math.min(wait, deadline - Date.now())));
  }
}

export function newLanguageRecord(id: string, plan: LanguagePlan): LanguageRecord {
  const { name, id: eventId, timing, duplicate } = plan.event;
  return { id, sleep: plan.sleep, event: { name, id: eventId, timing, duplicate }, plannedWakeAt: null, waitingSeenAt: null, heldForRestart: false, sends: [] };
}

/** The final answer of each phase ("first", "duplicate"): the last try of it. */
export function answersByPhase(record: Pick<LanguageRecord, "sends">): Partial<Record<SendPhase, EventSend>> {
  const out: Partial<Record<SendPhase, EventSend>> = {};
  for (const send of record.sends) out[send.phase] = send;
  return out;
}
