// Reproduction of a bug the soak's map phase found: a map step's progress (`items` in its state: total, next,
// running, succeeded, …) did not survive the workflow's object reloading its state from storage. The store read a
// step's row with `StoredStepSchema` (src/domain/machine/state.ts), the common step fields and `kind` only, which
// stripped every field of a kind's own; the map is the only kind with one. After an eviction, a runtime restart or a
// reset (FAULTS abortAfterPersist), the map step had no `items`: `settleMaps` skipped it, so items that ended stayed
// in the state as succeeded steps, their rows stayed `running`, no further item started, and the workflow stayed
// `running` for good with nothing overdue (the alarm check passed); the view's step had no `items` counts either. Fixed in
// f911f4e (step rows keep their kind's own fields); kept as a quick end-to-end regression check under wrangler dev.
//
//   node_modules/.bin/node chaos/repro/map-progress-lost.ts   (node ≥ 22; ports 8815, 8816, 8817)
//
// A map of 200 items, 20 at a time, against a remote that answers each in 300 ms; once 20 have succeeded, Shepherd
// is killed (kill -9) and started again on the same state, as the soak's restart does. Expected: the workflow
// completes within 30 s with 200 items succeeded. Exits 1 when it does not (the bug), 0 otherwise.
/* global fetch, setTimeout, console, process, URL */
import { fileURLToPath } from "node:url";
import { startFakeRemote } from "../../scripts/lib/fake-remote.ts";
import { installCleanup } from "../../scripts/lib/process-groups.ts";
import { field, isMapItemsPage, isWorkflowView } from "../lib/api-shapes.ts";
import type { ItemCounts } from "../lib/api-shapes.ts";
import { API_TOKEN, applyMigrations, createSandbox, startShepherd } from "../lib/shepherd.ts";

const PORT = 8815;
const REMOTE_PORT = 8817;
const ITEMS = 200;
const repoRoot = fileURLToPath(new URL("../..", import.meta.url));
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

installCleanup("repro");
const remote = await startFakeRemote({ port: REMOTE_PORT, handle: async (call) => ((await call.pause(300)) ? { status: 200, body: { done: true } } : undefined) });
const sandbox = createSandbox(repoRoot);
await applyMigrations(sandbox);
const shepherd = await startShepherd(sandbox, { port: PORT, inspectorPort: PORT + 1, serverFaults: {} });
const headers = { "Content-Type": "application/json", Authorization: `Bearer ${API_TOKEN}` };
const api = async (method: string, path: string, body?: unknown): Promise<{ status: number; body: unknown }> => {
  const res = await fetch(`http://127.0.0.1:${PORT}${path}`, { method, headers, ...(body ? { body: JSON.stringify(body) } : {}) });
  return { status: res.status, body: await res.json().catch(() => null) };
};
const mapStep = async (): Promise<{ workflow: string; step: string; items: ItemCounts | undefined }> => {
  const view = (await api("GET", "/v1/workflows/map-reload")).body;
  if (!isWorkflowView(view)) return { workflow: "unread", step: "unread", items: undefined };
  const step = view.steps.find((s) => s.id === "each");
  return { workflow: view.status, step: step?.status ?? "missing", items: step?.items };
};

const started = await api("POST", "/v1/workflows", {
  id: "map-reload",
  input: { items: Array.from({ length: ITEMS }, (_, i) => i) },
  definition: { name: "map-reload", steps: [{ id: "each", map: { items: "{{ input.items }}", maxConcurrency: 20, step: { action: { type: "http", url: `http://127.0.0.1:${REMOTE_PORT}/item`, body: { index: "{{ index }}" } } } } }] },
});
console.log(`POST /v1/workflows → ${started.status}${started.status === 201 ? "" : ` ${JSON.stringify(field(started.body, "error"))}`}`);
let before = await mapStep();
while ((before.items?.succeeded ?? 0) < 20 && before.workflow === "running") {
  await sleep(200);
  before = await mapStep();
}
console.log(`before the restart: workflow ${before.workflow}, items ${JSON.stringify(before.items)}`);
await shepherd.restart({ crash: true });
let after = await mapStep();
for (let waited = 0; waited < 30_000 && after.workflow !== "completed"; waited += 1_000) {
  await sleep(1_000);
  after = await mapStep();
}
const page = (await api("GET", "/v1/workflows/map-reload/steps/each/items?limit=1000")).body;
const byStatus: Record<string, number> = {};
for (const item of isMapItemsPage(page) ? page.items : []) byStatus[item.status] = (byStatus[item.status] ?? 0) + 1;
console.log(`after the restart: workflow ${after.workflow}, step ${after.step}, items ${JSON.stringify(after.items ?? null)}; rows by status ${JSON.stringify(byStatus)}`);
const lost = after.workflow !== "completed" || after.items?.succeeded !== ITEMS;
console.log(lost ? "BUG: the map lost its progress in the restart and does not go on" : `OK: all ${ITEMS} items succeeded after the restart`);
await shepherd.stop();
await remote.close();
sandbox.remove();
process.exit(lost ? 1 : 0);
