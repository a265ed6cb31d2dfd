// Reproduction of a saga gap the chaos soak found: a step whose action took effect on an attempt that
// timed out (ExecuteAndTimeout) and whose retries then ran out was not compensated, so its effect stayed.
// Fixed in c9d6724; kept as a quick end-to-end regression check under wrangler dev.
//
//   node_modules/.bin/node chaos/repro/leaked-effect.ts   (node ≥ 22; ports 8810, 8811, 8813)
//
// Workflow: reserve (ok) → charge (attempt 1 applies the charge then hangs past startToCloseMs, attempt 2
// gets 503, maxAttempts 2). Expected: compensated, with both the release AND the refund called.
// Prints what the remote saw; exits 1 when the refund was never requested (the bug), 0 otherwise.
/* global fetch, setTimeout, console, process, URL */
import { fileURLToPath } from "node:url";
import { startFakeRemote } from "../../scripts/lib/fake-remote.ts";
import { installCleanup } from "../../scripts/lib/process-groups.ts";
import { isWorkflowView } from "../lib/api-shapes.ts";
import type { RemoteCall } from "../lib/remote-operations.ts";
import { API_TOKEN, applyMigrations, createSandbox, startShepherd } from "../lib/shepherd.ts";

const PORT = 8810;
const REMOTE_PORT = 8813;
const repoRoot = fileURLToPath(new URL("../..", import.meta.url));

installCleanup("repro");
const requests: string[] = [];
const remote = await startFakeRemote({
  port: REMOTE_PORT,
  handle(call: RemoteCall & { requests: readonly unknown[] }) {
    requests.push(`${call.path} key=${call.key} attempt=${call.req.headers["shepherd-attempt"]}`);
    if (call.path === "/charge" && call.requests.length === 1) {
      requests.push("  -> charge applied, then no answer");
      return call.hold();
    }
    return call.path === "/charge" ? { status: 503, body: {} } : { status: 200, body: {} };
  },
});

const sandbox = createSandbox(repoRoot);
await applyMigrations(sandbox);
const shepherd = await startShepherd(sandbox, { port: PORT, inspectorPort: PORT + 1, serverFaults: {} });
const headers = { "Content-Type": "application/json", Authorization: `Bearer ${API_TOKEN}` };
const target = (path: string) => ({ type: "http", url: `http://127.0.0.1:${REMOTE_PORT}${path}` });
const body = {
  id: "leak-1",
  definition: {
    name: "leak",
    steps: [
      { id: "reserve", action: target("/reserve"), compensate: target("/release") },
      {
        id: "charge",
        action: target("/charge"),
        compensate: target("/refund"),
        timeouts: { startToCloseMs: 1500, heartbeatMs: 1000 },
        retry: { maxAttempts: 2, initialIntervalMs: 100 },
      },
    ],
  },
};
await fetch(`http://127.0.0.1:${PORT}/v1/workflows`, { method: "POST", headers, body: JSON.stringify(body) });
await new Promise((resolve) => setTimeout(resolve, 6_000));
const workflow: unknown = await (await fetch(`http://127.0.0.1:${PORT}/v1/workflows/leak-1`, { headers })).json();
if (!isWorkflowView(workflow)) throw new Error(`GET /v1/workflows/leak-1 answered ${JSON.stringify(workflow)}`);

console.log(`workflow ${workflow.status}: ${workflow.steps.map((s) => `${s.id}=${s.status}`).join(" ")}`);
console.log(requests.join("\n"));
const refunded = requests.some((line) => line.startsWith("/refund"));
console.log(refunded ? "OK: the applied charge was refunded" : "BUG: the charge took effect and was never refunded");
await shepherd.stop();
await remote.close();
sandbox.remove();
process.exit(refunded ? 0 : 1);
