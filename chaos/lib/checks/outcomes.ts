// How the workflows ended: every one reached a terminal status in the bound, enough of them completed for the run
// to mean something, and the Worker's faults were really injected.
import { TERMINAL_STATUSES } from "../client.ts";
import type { Features } from "../shepherd.ts";
import type { Final } from "../finals.ts";
import type { SoakWorkflow } from "../definitions.ts";
import type { WorkflowResult } from "../results.ts";
import { fail, pass, skipped, tally } from "./check.ts";
import type { Check } from "./check.ts";

/** A non-terminal workflow whose history has been silent this long is stuck, not merely slow. */
const STUCK_AFTER_MS = 10_000;

/**
 * Every workflow was started and reached completed/failed/compensated/cancelled within the bound. The ones
 * that did not are told apart: never started, still moving when time ran out, or stuck (history silent).
 */
export function checkTerminal(results: readonly WorkflowResult[], finals: readonly Final[]): Check {
  const name = "all workflows terminal";
  const now = Date.now();
  const notStarted = results.filter((r) => !r.started).map((r) => ({ id: r.id, startStatuses: r.startStatuses, error: r.startError }));
  const open = finals.flatMap((f) => {
    if (!f.view || TERMINAL_STATUSES.has(f.view.status)) return [];
    const lastEventAt = f.events.at(-1)?.at ?? f.view.updatedAt;
    return [{ id: f.id, status: f.view.status, silentMs: now - lastEventAt, steps: f.view.steps.map((s) => `${s.id}:${s.status}#${s.attempt}`).join(" ") }];
  });
  const stuck = open.filter((o) => o.silentMs > STUCK_AFTER_MS);
  const moving = open.filter((o) => o.silentMs <= STUCK_AFTER_MS);
  const unreadable = finals.filter((f) => f.started && !f.view).map((f) => ({ id: f.id, status: f.readStatus }));
  const problems = notStarted.length + open.length + unreadable.length;
  const detail =
    `${results.length - problems}/${results.length} terminal` +
    (problems ? ` (not started ${notStarted.length}, still moving at the bound ${moving.length}, stuck > ${STUCK_AFTER_MS / 1000} s ${stuck.length}, unreadable ${unreadable.length})` : "");
  return (problems ? fail : pass)(name, detail, { stuck: stuck.slice(0, 20), movingAtBound: moving.slice(0, 20), unreadable: unreadable.slice(0, 20), notStarted: notStarted.slice(0, 10) });
}

/**
 * At least `threshold` of the workflows the remote did not decline and the soak did not cancel ended `completed`:
 * a run in which everything errored or compensated must not pass.
 */
export function checkProgress(finals: readonly Final[], workflows: readonly SoakWorkflow[], threshold: number): Check {
  const name = `progress ≥ ${Math.round(threshold * 100)} % completed`;
  const declined = new Set(workflows.filter((wf) => wf.declinedStep || wf.closedByDesign).map((wf) => wf.id));
  const eligible = finals.filter((f) => !declined.has(f.id));
  const completed = eligible.filter((f) => f.view?.status === "completed").length;
  if (eligible.length === 0) return fail(name, "no workflow was expected to complete");
  const rate = completed / eligible.length;
  const notCompleted = eligible.filter((f) => f.view?.status !== "completed").map((f) => ({ id: f.id, status: f.view?.status ?? null, error: f.view?.error?.message }));
  const others = tally(notCompleted.map((f) => f.status ?? "not started"));
  const otherText = Object.entries(others).map(([status, n]) => `${status} ${n}`).join(", ");
  const burst = eligible.filter((f) => f.kind === "burst");
  const burstText = burst.length ? `; burst ${burst.filter((f) => f.view?.status === "completed").length}/${burst.length}` : "";
  const detail = `${completed}/${eligible.length} = ${(rate * 100).toFixed(1)} %${burstText}${otherText ? `; others: ${otherText}` : ""} (${declined.size} declined or cancelled by design left out)`;
  const started = notCompleted.filter((f) => f.status);
  return (rate >= threshold ? pass : fail)(name, detail, { rate, notCompleted: started.slice(0, 20), notStartedCount: notCompleted.length - started.length });
}

/** Server-side faults only count when the build under test has the FAULTS hook (static look at src/). */
export function checkServerFaults(features: Features, serverFaults: Readonly<Record<string, number>>): Check {
  const name = "server faults injected (FAULTS)";
  const asked = Object.entries(serverFaults).filter(([, p]) => p > 0).map(([key]) => key);
  if (asked.length === 0) return pass(name, "none requested");
  if (!features.faultsVar) return skipped(name, "skipped (this build has no FAULTS hook; only remote faults were injected)");
  const unknown = asked.filter((key) => !features.faultKeys[key]);
  return unknown.length
    ? skipped(name, `skipped for ${unknown.join(", ")} (not in this build's src/); others passed to the Worker`)
    : pass(name, `${asked.join(", ")} passed to the Worker (DEV_HOOKS=true)`);
}
