// The workflow language of v1.1 as the tests use it: sleep and wait steps, the routes that send events to a
// workflow and control it (pause, resume, terminate, redrive), and the object's restart.
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { api, bearer, type ApiResponse, type TestTenant } from "./api";
import { schedulerStub } from "./scheduler";

export const MINUTE = 60_000;
export const HOUR = 60 * MINUTE;
export const DAY = 24 * HOUR;

export function sleepStep(id: string, sleep: { durationMs?: number; until?: string | number }, extra: Record<string, unknown> = {}) {
  return { id, sleep, ...extra };
}

export function waitStep(id: string, waitForEvent: { event: string; timeoutMs: number; onTimeout?: "fail" | "skip" }, extra: Record<string, unknown> = {}) {
  return { id, waitForEvent, ...extra };
}

export interface SentEvent {
  event: string;
  payload?: unknown;
  id?: string;
}

/** `POST /v1/workflows/{id}/events`, as the tenant's client sends it. */
export function sendEvent(workflowId: string, event: SentEvent, tenant: TestTenant = "default"): Promise<ApiResponse> {
  return api("POST", `/v1/workflows/${workflowId}/events`, event, { headers: bearer(tenant) });
}

export type ControlAction = "pause" | "resume" | "terminate" | "redrive";

/**
 * `POST /v1/workflows/{id}/<action>`. Terminate and redrive take a JSON body (`{}` unless given); pause and
 * resume take none, like cancel.
 */
export function control(workflowId: string, action: ControlAction, body?: Record<string, unknown>, tenant: TestTenant = "default"): Promise<ApiResponse> {
  const sent = body ?? (action === "terminate" || action === "redrive" ? {} : undefined);
  return api("POST", `/v1/workflows/${workflowId}/${action}`, sent, { headers: bearer(tenant) });
}

export interface StepView {
  id: string;
  status: string;
  attempt: number;
  output?: any;
  error?: any;
  sleepingUntil?: number;
  waitingFor?: { event: string; timeoutAt: number };
  attempts: { n: number; kind: string; status: string; error?: any }[];
}

/** One step of a workflow view; throws when the view has no such step. */
export function stepOf(workflow: { steps: StepView[] }, stepId: string): StepView {
  const step = workflow.steps.find((s) => s.id === stepId);
  if (!step) throw new Error(`no step "${stepId}" in ${JSON.stringify(workflow.steps.map((s) => s.id))}`);
  return step;
}

/**
 * Restarts the workflow's object the hard way, as a crash or a redeploy would: its instance is aborted (not
 * drained like an eviction) and whatever it held in memory is gone; storage and the alarm stay.
 */
export async function restartObject(workflowId: string, tenant = "default"): Promise<void> {
  await runInDurableObject(schedulerStub(workflowId, tenant), (_instance, state) => {
    state.abort("restarted by the test");
  }).catch((error: unknown) => {
    if (!String(error).includes("restarted by the test")) throw error;
  });
}

/**
 * Runs the object's alarm now, setting one first when none is set: as an alarm for some other deadline would
 * wake the supervisor. For showing that what a workflow holds (paused, or ended) stays held when it wakes.
 */
export async function wakeSupervisor(workflowId: string, tenant = "default"): Promise<void> {
  const stub = schedulerStub(workflowId, tenant);
  await runInDurableObject(stub, async (_instance, state) => {
    if ((await state.storage.getAlarm()) === null) await state.storage.setAlarm(Date.now());
  });
  if (!(await runDurableObjectAlarm(stub))) throw new Error(`the alarm of ${tenant}:${workflowId} did not run`);
}
