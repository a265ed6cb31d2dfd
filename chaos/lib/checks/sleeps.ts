// Sleeps and waits (contract v1.1, "Step kinds"): every sleep woke at its time, never before, and neither kind of
// step used an attempt, a queue message or the remote.
import { field } from "../api-shapes.ts";
import type { HistoryEvent } from "../api-shapes.ts";
import { OVERDUE_LIMIT_MS } from "../alarms.ts";
import { isTerminal } from "../client.ts";
import type { SoakWorkflow } from "../definitions.ts";
import type { Final } from "../finals.ts";
import { ofStep } from "../history.ts";
import { SLEEP_STEP, WAIT_STEP } from "../language.ts";
import type { SleepPlan } from "../language.ts";
import { distribution } from "../metrics.ts";
import type { RemoteStats } from "../remote-ledger.ts";
import type { Outage } from "../restart.ts";
import { fail, pass } from "./check.ts";
import type { Check, Report, Violation } from "./check.ts";
import { languageCases } from "./language-cases.ts";
import type { LanguageCase } from "./language-cases.ts";

/** How late a wake may be, not counting a restart it fell into (as the alarm check: 5 s). */
const WAKE_LATE_LIMIT_MS = OVERDUE_LIMIT_MS;
/** The planned wake of a `durationMs` sleep is step_sleeping's `until`: `at + durationMs`, give or take this much. */
const DURATION_SLACK_MS = { below: 50, above: 1_000 };
/** The history events of an attempt: sleeps and waits have none. */
const ATTEMPT_TYPES: ReadonlySet<string> = new Set(["step_scheduled", "step_started", "step_retry_scheduled", "step_timed_out", "step_heartbeat_missed", "step_waiting"]);

/** One sleep: it woke (how long after it was due), never started, or slept and never woke (a violation). */
type Wake = { woke: true; afterDueMs?: number } | { woke: false; reached: boolean };

/**
 * Every sleep woke at its time, never before: its `step_succeeded` is not earlier than the planned wake
 * (an `until` sleep: the time the harness put in the input; a `durationMs` one: `step_sleeping`'s `until`,
 * which must be its start plus durationMs), its output `sleptUntil` is that time, and it woke at most 5 s
 * after it was due (the planned wake, or the sleep's start when that came later) unless the restart's outage
 * explains it.
 */
export function checkSleeps(finals: readonly Final[], workflows: readonly SoakWorkflow[], outage: Outage | null): Check {
  const name = "sleeps woke on time, never early";
  const violations: Violation[] = [];
  const lateness: number[] = [];
  let woke = 0;
  let notReached = 0;
  for (const c of languageCases(finals, workflows)) {
    const wake = judgeSleep(c, outage, (kind, extra = {}) => violations.push({ kind, id: c.f.id, mode: c.plan.sleep.mode, ...extra }));
    if (wake.woke) woke += 1;
    else if (!wake.reached) notReached += 1;
    if (wake.woke && wake.afterDueMs !== undefined) lateness.push(wake.afterDueMs);
  }
  if (woke + notReached === 0) return fail(name, "no workflow had a sleep");
  const l = distribution(lateness);
  const detail =
    `${woke} sleeps woke, ${violations.filter((x) => x.kind === "woke early").length} before their time` +
    `${notReached ? ` (${notReached} never started: the action before them did not succeed)` : ""}; ` +
    `woke after due p50 ${l.p50 ?? "–"} ms, max ${l.max ?? "–"} ms; ${violations.length} violation(s)`;
  return (violations.length ? fail : pass)(name, detail, { violations: violations.slice(0, 30), latenessMs: l });
}

function judgeSleep({ plan, f, view }: LanguageCase, outage: Outage | null, v: Report): Wake {
  const sleeping = ofStep(f.events, "step_sleeping", SLEEP_STEP);
  const succeeded = ofStep(f.events, "step_succeeded", SLEEP_STEP);
  const step = view.steps.find((s) => s.id === SLEEP_STEP);
  const wokeAt = succeeded[0]?.at;
  if (wokeAt === undefined) {
    // Never woke: the first action never succeeded (the sleep never started), or a stuck sleep (the terminal check names it).
    const stuck = sleeping.length > 0 && isTerminal(view.status);
    if (stuck) v("slept and never woke", { stepStatus: step?.status, workflowStatus: view.status });
    return { woke: false, reached: stuck };
  }
  if (succeeded.length > 1) v("woke more than once", { count: succeeded.length });
  const planned = plannedWake(plan.sleep, f, sleeping[0], v);
  if (planned === "unknown") return { woke: true };
  if (typeof planned !== "number") {
    v("no planned wake time", { planned });
    return { woke: true };
  }
  if (wokeAt < planned) v("woke early", { earlyMs: planned - wokeAt, planned, wokeAt });
  if (field(step?.output, "sleptUntil") !== planned) v("output sleptUntil is not the planned time", { output: step?.output ?? null, planned });
  // A sleep that started after its time (its action before it was late) is due at once; a wake due while
  // Shepherd was down counts from when it came back.
  const due = Math.max(planned, sleeping[0]?.at ?? planned);
  const inOutage = outage !== null && due >= outage.from - 1_000 && due <= outage.to;
  const late = wokeAt - (inOutage ? Math.max(due, outage.to) : due);
  if (late > WAKE_LATE_LIMIT_MS) v("woke late", { lateMs: late, planned, wokeAt, inOutage });
  return { woke: true, afterDueMs: wokeAt - due };
}

/**
 * When the sleep was meant to wake: an `until` sleep at the time in the input (which step_sleeping must carry),
 * a `durationMs` one at step_sleeping's `until` (its start + durationMs); "unknown" without a step_sleeping to
 * read it from.
 */
function plannedWake(sleep: SleepPlan, f: Final, sleeping: HistoryEvent | undefined, v: Report): number | null | undefined | "unknown" {
  if (sleep.mode === "until") {
    const planned = f.language?.plannedWakeAt;
    if (sleeping && sleeping.data?.until !== planned) v("step_sleeping's until is not the time in the input", { until: sleeping.data?.until, planned });
    return planned;
  }
  if (!sleeping) {
    v("a durationMs sleep without step_sleeping");
    return "unknown";
  }
  const planned = sleeping.data?.until;
  const expected = sleeping.at + sleep.durationMs;
  const near = typeof planned === "number" && planned >= expected - DURATION_SLACK_MS.below && planned <= expected + DURATION_SLACK_MS.above;
  if (!near) v("step_sleeping's until is not its start + durationMs", { until: planned, sleepingAt: sleeping.at, durationMs: sleep.durationMs });
  return planned;
}

/**
 * Sleeps and waits use no agent and no queue message: their view's `attempts` is empty, their history has
 * no attempt of theirs (scheduled, started, timed out, retried), and the remote never heard of them.
 */
export function checkNoQueueAttempts(finals: readonly Final[], workflows: readonly SoakWorkflow[], remoteStats: RemoteStats): Check {
  const name = "no queue attempt for a sleep or a wait";
  const violations: Violation[] = [];
  const stepIds: ReadonlySet<string | undefined> = new Set([SLEEP_STEP, WAIT_STEP]);
  let steps = 0;
  for (const { f, view } of languageCases(finals, workflows)) {
    for (const step of view.steps) {
      if (!stepIds.has(step.id)) continue;
      steps += 1;
      if (!Array.isArray(step.attempts) || step.attempts.length) violations.push({ kind: "attempts in the view", id: f.id, stepId: step.id, attempts: step.attempts });
    }
    for (const e of f.events) if (stepIds.has(e.stepId) && ATTEMPT_TYPES.has(e.type)) violations.push({ kind: `${e.type} in the history`, id: f.id, stepId: e.stepId, attempt: e.attempt });
  }
  for (const k of Object.values(remoteStats.keys)) if (stepIds.has(k.stepId)) violations.push({ kind: "the remote was called for it", key: k.key });
  if (steps === 0) return fail(name, "no sleep or wait step to look at");
  return (violations.length ? fail : pass)(name, `${steps} sleep and wait steps, ${violations.length} with an attempt`, { violations: violations.slice(0, 30) });
}
