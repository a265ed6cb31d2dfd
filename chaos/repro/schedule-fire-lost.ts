// Reproduction of a gap the chaos soak's schedule check found: a cron fire whose start fails for a transient
// reason (the workflow's object reset mid-start: FAULTS abortAfterPersist, which the soak injects at 2 %) is
// recorded `failed` in the schedule's `recent` and never tried again, so that fire has no workflow, although the
// start is idempotent by id (`<schedule>:<fire time>`) and the schedule keeps pending starts for exactly this
// (src/cron/cron-schedule.ts: "should this instance die first, the alarm makes them then"; only the
// schedule's own death was covered, not its callee's). Fixed in 69c4a6b (a start that broke off stays pending and
// the alarm makes it again while the fire is within its catch-up window); kept as a quick end-to-end regression
// check under wrangler dev.
//
//   node_modules/.bin/node chaos/repro/schedule-fire-lost.ts   (node ≥ 22; ports 8810, 8811, 8813)
//
// A schedule fires every 2 s (overlap allow, catch-up 60 s) for 20 s with abortAfterPersist at 0.8; then, 8 s
// later (past the 5 s start lease), every recorded fire is read by its workflow id. Expected: every fire
// `started` and its workflow there. Exits 1 when a fire is recorded `failed` or has no workflow (the bug), 0
// otherwise.
/* global fetch, setTimeout, console, process, URL */
import { fileURLToPath } from "node:url";
import { startFakeRemote } from "../../scripts/lib/fake-remote.ts";
import { installCleanup } from "../../scripts/lib/process-groups.ts";
import { isScheduleView } from "../lib/api-shapes.ts";
import { API_TOKEN, applyMigrations, createSandbox, startShepherd } from "../lib/shepherd.ts";

const PORT = 8810;
const REMOTE_PORT = 8813;
const repoRoot = fileURLToPath(new URL("../..", import.meta.url));
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

installCleanup("repro");
const remote = await startFakeRemote({ port: REMOTE_PORT, handle: () => ({ status: 200, body: { ok: true } }) });
const sandbox = createSandbox(repoRoot);
await applyMigrations(sandbox);
const shepherd = await startShepherd(sandbox, { port: PORT, inspectorPort: PORT + 1, serverFaults: { abortAfterPersist: 0.8 } });
const headers = { "Content-Type": "application/json", Authorization: `Bearer ${API_TOKEN}` };
const api = async (method: string, path: string, body?: unknown): Promise<{ status: number; body: unknown }> => {
  const res = await fetch(`http://127.0.0.1:${PORT}${path}`, { method, headers, ...(body ? { body: JSON.stringify(body) } : {}) });
  return { status: res.status, body: await res.json().catch(() => null) };
};

const created = await api("POST", "/v1/schedules", {
  id: "every-2s",
  cron: "*/2 * * * * *",
  overlap: "allow",
  catchupWindowMs: 60_000,
  workflow: { definition: { name: "tick", steps: [{ id: "a", action: { type: "http", url: `http://127.0.0.1:${REMOTE_PORT}/tick` } }] } },
});
console.log(`POST /v1/schedules → ${created.status}`);
await sleep(20_000);
const view = (await api("GET", "/v1/schedules/every-2s")).body;
if (!isScheduleView(view)) throw new Error(`GET /v1/schedules/every-2s answered ${JSON.stringify(view)}`);
await api("DELETE", "/v1/schedules/every-2s");
await sleep(8_000);

let lost = 0;
for (const fire of view.recent) {
  const workflow = await api("GET", `/v1/workflows/${encodeURIComponent(`every-2s:${fire.at}`)}`);
  const bad = fire.outcome !== "started" || workflow.status !== 200;
  if (bad) lost += 1;
  console.log(`${new Date(fire.at).toISOString()} ${fire.outcome}${fire.error ? ` (${fire.error})` : ""}; workflow every-2s:${fire.at} → ${workflow.status}${bad ? "   <- lost" : ""}`);
}
console.log(lost ? `BUG: ${lost} of ${view.recent.length} fires recorded without a workflow, never retried` : `OK: all ${view.recent.length} fires started their workflow`);
await shepherd.stop();
await remote.close();
sandbox.remove();
process.exit(lost ? 1 : 0);
