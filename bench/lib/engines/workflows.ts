// The baseline: bench/workflows-baseline (Cloudflare Workflows: one step.do per step; for the fan-out case,
// Promise.all of one step.do per item) under `wrangler dev` (scripts/lib/wrangler-dev.ts), from a copy in the
// temp dir with its own persisted state.
import { requestJson, retryAfterSeconds } from "../../../scripts/lib/http-json.ts";
import { field, numberField } from "../../../scripts/lib/json.ts";
import type { WranglerDev } from "../../../scripts/lib/wrangler-dev.ts";
import { copiedBenchApp } from "./dev-lifecycle.ts";
import { FAN_OUT_START_TIMEOUT_MS } from "./engine.ts";
import type { Engine, FanOutApi, RetryPolicy, StartResult, WorkflowStatus } from "./engine.ts";
import type { EngineOptions } from "./shepherd.ts";

const TERMINAL = new Set(["complete", "errored", "terminated"]);

/** Workflows' step retry config. */
export interface WorkflowsRetry {
  limit: number;
  delay: number;
  backoff: "constant" | "exponential";
}

/**
 * Shepherd's retry policy as Workflows' step config. Workflows counts retries (not attempts) and its
 * exponential backoff doubles, which is Shepherd's default coefficient; it has no jitter. A zero initial
 * interval is a zero delay either way.
 */
export function toWorkflowsRetry(policy: RetryPolicy): WorkflowsRetry {
  const constant = policy.initialIntervalMs === 0 || (policy.backoffCoefficient ?? 2) === 1;
  return { limit: policy.maxAttempts - 1, delay: policy.initialIntervalMs, backoff: constant ? "constant" : "exponential" };
}

/**
 * GET /<kind>/{id}: instance.status() with the baseline's own completion stamp (its output's finishedAt) and,
 * for an instance that errored, its error.
 */
export function instanceStatus(status: number, body: unknown, text: string): WorkflowStatus {
  if (status !== 200) return { state: `http_${status}`, terminal: false, completed: false, error: text.slice(0, 300) };
  const state = String(field(body, "status"));
  const error = field(body, "error");
  return {
    state,
    terminal: TERMINAL.has(state),
    completed: state === "complete",
    endedAt: numberField(field(body, "output"), "finishedAt"),
    ...(error === undefined || error === null ? {} : { error: JSON.stringify(error).slice(0, 300) }),
  };
}

/** The baseline's calls for the instances of one kind (see its index.ts): create, read, terminate. */
function instancesOf(dev: WranglerDev, kind: "instances" | "fan-outs") {
  const instance = (id: string): string => `${dev.url}/${kind}/${encodeURIComponent(id)}`;
  return {
    async create(body: unknown, timeoutMs?: number): Promise<StartResult> {
      const { status, text, headers } = await requestJson(`${dev.url}/${kind}`, { method: "POST", body, timeoutMs });
      // The baseline answers 409 for any failed create, a known id included, so it cannot say `existing`.
      return { ok: status === 201, status, existing: false, retryAfterS: retryAfterSeconds(headers), error: status === 201 ? undefined : text.slice(0, 300) };
    },
    async readStatus(id: string): Promise<WorkflowStatus> {
      const { status, body, text } = await requestJson(instance(id));
      return instanceStatus(status, body, text);
    },
    async cancel(id: string): Promise<void> {
      await requestJson(`${instance(id)}/terminate`, { method: "POST" });
    },
  };
}

/** The fan-out case on the baseline: one FanOutWorkflow instance over the items 0 … N-1. */
function fanOutApi(dev: WranglerDev): FanOutApi {
  const fanOuts = instancesOf(dev, "fan-outs");
  return {
    start: (spec) =>
      fanOuts.create({
        id: spec.id,
        items: Array.from({ length: spec.items }, (_, index) => index),
        url: spec.url,
        retry: toWorkflowsRetry(spec.retry),
        timeoutMs: spec.timeouts.startToCloseMs,
      }, FAN_OUT_START_TIMEOUT_MS),
    readStatus: fanOuts.readStatus,
    cancel: fanOuts.cancel,
  };
}

export function workflowsEngine(options: EngineOptions): Engine {
  const { dev, lifecycle } = copiedBenchApp(options, { name: "workflows", source: "workflows-baseline" });
  const instances = instancesOf(dev, "instances");
  return {
    name: "workflows",
    label: "Workflows",
    // burstAtScale false: the burst case runs only its smallest W here (the baseline finished none of 10 000
    // workflows in 300 s in the run; the larger sizes would only add a long wait for an empty figure).
    supports: { detection: false, supervisor: false, burstAtScale: false },
    source: "bench/workflows-baseline",
    origin: dev.url,
    ...lifecycle,
    startWorkflow: (spec) => instances.create({ id: spec.id, steps: spec.steps, retry: toWorkflowsRetry(spec.retry), timeoutMs: spec.timeouts.startToCloseMs }),
    readStatus: instances.readStatus,
    cancel: instances.cancel,
    fanOut: fanOutApi(dev),
  };
}
