// The floor: bench/floor (one Durable Object per workflow, one SQLite row per step, the remote over fetch, no queue)
// under `wrangler dev` (scripts/lib/wrangler-dev.ts), from a copy in the temp dir with its own persisted state.
// What Shepherd spends beyond it is Shepherd's overhead.
import { requestJson, retryAfterSeconds } from "../../../scripts/lib/http-json.ts";
import { numberField, stringField } from "../../../scripts/lib/json.ts";
import { copiedBenchApp } from "./dev-lifecycle.ts";
import type { Engine, WorkflowStatus } from "./engine.ts";
import type { EngineOptions } from "./shepherd.ts";

/** GET /workflows/{id}: {status, endedAt} (the floor's own completion stamp). */
export function floorStatus(status: number, body: unknown, text: string): WorkflowStatus {
  if (status !== 200) return { state: `http_${status}`, terminal: false, completed: false, error: text.slice(0, 300) };
  const state = stringField(body, "status") ?? "unknown";
  return { state, terminal: state !== "running", completed: state === "completed", endedAt: numberField(body, "endedAt") };
}

export function floorEngine(options: EngineOptions): Engine {
  const { dev, lifecycle } = copiedBenchApp(options, { name: "floor", source: "floor" });
  const workflow = (id: string): string => `${dev.url}/workflows/${encodeURIComponent(id)}`;
  return {
    name: "floor",
    label: "Floor",
    // It has no supervisor of its own to report on, and no history; the burst it runs at every W.
    supports: { detection: false, supervisor: false, burstAtScale: true, rowsBilled: true },
    source: "bench/floor",
    origin: dev.url,
    ...lifecycle,
    async startWorkflow(spec) {
      const body = { id: spec.id, steps: spec.steps, retry: spec.retry, timeoutMs: spec.timeouts.startToCloseMs };
      const { status, text, headers } = await requestJson(`${dev.url}/workflows`, { method: "POST", body });
      return { ok: status === 201, status, existing: status === 200, retryAfterS: retryAfterSeconds(headers), error: status === 201 ? undefined : text.slice(0, 300) };
    },
    async readStatus(id) {
      const { status, body, text } = await requestJson(workflow(id));
      return floorStatus(status, body, text);
    },
    async cancel(id) {
      await requestJson(`${workflow(id)}/cancel`, { method: "POST" });
    },
  };
}
