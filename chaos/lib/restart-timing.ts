// When the regular workload's crash-restart comes. Once due (after enough starts, or when the burst's backlog
// peaks), the kill waits up to RESTART_DEFER_MAX_MS, starts going on, for a workflow of the language to have
// something the crash could lose: a sleep with time left, its event in the inbox, or a wait whose late event is
// held back until Shepherd is back. So the crash tests that none of them is lost.
import { sleep } from "../../scripts/lib/async.ts";
import type { ShepherdClient } from "./client.ts";
import type { WorkflowView } from "./api-shapes.ts";
import { field } from "./api-shapes.ts";
import { SLEEP_STEP, WAIT_STEP } from "./language.ts";
import type { LanguageRecord } from "./language.ts";
import type { WorkflowResult } from "./results.ts";

const RESTART_DEFER_MAX_MS = 8_000;
/** A sleep with less left than this may wake before the kill lands. */
const SLEEP_LEFT_MIN_MS = 700;

export interface RestartTrigger {
  /** Asks for the restart: once, only when one is planned, and not after the workload ended. */
  trigger(reason: string): void;
  /** The restart under way, for new starts to wait on; null when none is. */
  gate(): Promise<void> | null;
  /** From the trigger to the end of the restart: late events are held meanwhile, so a wait spans the crash. */
  pending(): boolean;
  /** The workload ended: no restart begins after this; resolves once one under way is over. */
  finish(): Promise<void>;
}

export interface RestartTiming {
  client: ShepherdClient;
  results: readonly WorkflowResult[];
  /** Whether a restart is planned at all. */
  enabled: boolean;
  restart: (reason: string) => Promise<void>;
}

export function restartTrigger({ client, results, enabled, restart }: RestartTiming): RestartTrigger {
  let gate: Promise<void> | null = null;
  let done: Promise<void> | null = null;
  let triggered = false;
  let pending = false;
  let finished = false;
  const run = async (reason: string): Promise<void> => {
    const from = Date.now();
    let caught = await crashWorthy(client, results);
    while (!caught && !finished && Date.now() - from < RESTART_DEFER_MAX_MS) {
      await sleep(100);
      caught = await crashWorthy(client, results);
    }
    if (!finished) {
      gate = restart(restartReason(reason, caught, Date.now() - from));
      await gate.finally(() => (gate = null));
    }
  };
  return {
    trigger(reason) {
      if (triggered || finished || !enabled) return;
      triggered = true;
      pending = true;
      done = run(reason).finally(() => (pending = false));
    },
    gate: () => gate,
    pending: () => pending,
    async finish() {
      finished = true;
      if (done) await done;
    },
  };
}

function restartReason(reason: string, caught: string | null, waited: number): string {
  if (!caught) return `${reason}; no sleep, wait or buffered event to catch in ${waited} ms`;
  return `${reason}; ${waited ? `after ${waited} ms, ` : ""}when ${caught}`;
}

/** What the crash could lose now: candidates from the last readings, confirmed by a fresh one; null when nothing. */
async function crashWorthy(client: ShepherdClient, results: readonly WorkflowResult[]): Promise<string | null> {
  for (const r of results) {
    if (!r.language || !r.started || r.terminal) continue;
    const buffered = r.language.sends.some((send) => send.phase === "first" && field(send.body, "consumed") === false);
    // No reading yet after an event answered `consumed: false`: the send came first, so it may be in the inbox.
    if (!(r.lastView ? crashCatches(r.id, r.language, r.lastView, Date.now()) : buffered)) continue;
    const { value: view } = await client.getWorkflow(r.id);
    const caught = view ? crashCatches(r.id, r.language, view, Date.now()) : null;
    if (caught) return caught;
  }
  return null;
}

/**
 * What the crash would catch in this reading of a language workflow, or null: a sleep with time left, its
 * event in the inbox while the wait cannot start for a while yet (the first action still runs, or the
 * sleep has time left), or a wait whose late event is held.
 */
function crashCatches(id: string, language: LanguageRecord, view: WorkflowView, now: number): string | null {
  const steps = view.steps ?? [];
  const sleepStep = steps.find((step) => step.id === SLEEP_STEP);
  const waitStep = steps.find((step) => step.id === WAIT_STEP);
  const sleepLeft = sleepStep?.status === "sleeping" ? (sleepStep.sleepingUntil ?? NaN) - now : null;
  const inInbox = (view.pendingEvents ?? []).some((e) => e.id === language.event.id);
  const what: string[] = [];
  if (sleepLeft !== null && sleepLeft >= SLEEP_LEFT_MIN_MS) what.push(`sleeps ${sleepLeft} ms more`);
  if (inInbox && (sleepStep?.status === "pending" || (sleepLeft ?? 0) >= SLEEP_LEFT_MIN_MS)) what.push("holds its event in the inbox");
  if (language.heldForRestart && waitStep?.status === "waiting") what.push("waits for its event (held until Shepherd is back)");
  return what.length ? `${id} ${what.join(" and ")}` : null;
}
