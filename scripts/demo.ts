// `npm run demo`: Shepherd (`npm start`) and the example remote services, then a handful of workflows that show
// every outcome: one that completes, one that needs retries, one compensated, one waiting for an event, one
// escalated to an operator (with a deadline), one stuck job caught by its stall deadline. It prints where to
// look and keeps both services running until Ctrl-C. Local state persists in .wrangler/state like `npm start`.
import { mkdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { sleep, waitUntil } from "./lib/async.ts";
import { requestJson } from "./lib/http-json.ts";
import type { JsonResponse } from "./lib/http-json.ts";
import { errorMessage, field } from "./lib/json.ts";
import { installCleanup, spawnGroup } from "./lib/process-groups.ts";

const root = fileURLToPath(new URL("..", import.meta.url));
const SHEPHERD = "http://localhost:8787";
const REMOTE = "http://127.0.0.1:8788";
const TOKEN = "dev-token";
const LOG_DIR = `${root}.wrangler/demo`;
const START_TIMEOUT_MS = 120_000;

interface HttpAction {
  type: "http";
  url: string;
  body?: unknown;
}

/** A step of a demo's definition, as the API takes it (only the fields the demos use). */
interface DemoStep {
  id: string;
  action?: HttpAction;
  compensate?: HttpAction;
  waitForEvent?: { event: string; timeoutMs: number };
  timeouts?: { heartbeatMs: number; progressMs: number };
}

/** A workflow definition and what it shows. */
interface Demo {
  shows: string;
  name: string;
  steps: DemoStep[];
  onFailure?: { escalate: { afterMs: number; then: "compensate" } };
}

const action = (path: string, body?: unknown): HttpAction => ({ type: "http", url: `${REMOTE}${path}`, ...(body ? { body } : {}) });

/** The workflows, by what they show. Ids get the run's suffix, so running the demo again starts new ones. */
const DEMOS: Demo[] = [
  {
    shows: "completes: reserve, charge, ship",
    name: "order-fulfillment",
    steps: [
      { id: "reserve", action: action("/reserve"), compensate: action("/release") },
      { id: "charge", action: action("/charge", { amount: 42 }), compensate: action("/refund") },
      { id: "ship", action: action("/ship") },
    ],
  },
  { shows: "retried: 503 twice, then 200", name: "flaky-partner", steps: [{ id: "sync", action: action("/flaky") }] },
  {
    shows: "compensated: the charge is declined, the reservation released",
    name: "declined-order",
    steps: [
      { id: "reserve", action: action("/reserve"), compensate: action("/release") },
      { id: "charge", action: action("/decline") },
    ],
  },
  {
    shows: "waiting for the event `approved` (send it to finish)",
    name: "approval",
    steps: [
      { id: "draft", action: action("/reserve") },
      { id: "approve", waitForEvent: { event: "approved", timeoutMs: 3_600_000 } },
      { id: "ship", action: action("/ship") },
    ],
  },
  {
    shows: "escalated to an operator; compensates by itself after 10 minutes",
    name: "needs-a-person",
    onFailure: { escalate: { afterMs: 600_000, then: "compensate" } },
    steps: [
      { id: "reserve", action: action("/reserve"), compensate: action("/release") },
      { id: "charge", action: action("/decline") },
    ],
  },
  {
    shows: "a job stuck at 47 %: stalled after 5 s, retried, completed",
    name: "render-video",
    steps: [{ id: "render", action: action("/render"), timeouts: { heartbeatMs: 30_000, progressMs: 5_000 } }],
  },
];

function api(method: string, path: string, body?: unknown): Promise<JsonResponse> {
  return requestJson(`${SHEPHERD}${path}`, { method, body, headers: { Authorization: `Bearer ${TOKEN}` } });
}

function startService(title: string, args: string[]): void {
  const proc = spawnGroup(process.execPath, args, { cwd: root, env: process.env, logFile: `${LOG_DIR}/${title}.log`, title });
  void proc.exited.then((status) => {
    console.error(`demo: ${title} exited (${status}); see ${LOG_DIR}/${title}.log`);
    process.exit(1);
  });
}

async function reachable(url: string): Promise<boolean> {
  try {
    return (await requestJson(url, { timeoutMs: 2_000 })).status < 500;
  } catch {
    return false;
  }
}

/** Both services, once nothing else answers on Shepherd's port; resolves once both answer. */
async function startServices(): Promise<void> {
  if (await reachable(`${SHEPHERD}/healthz`)) throw new Error(`something already answers on ${SHEPHERD}: stop it (npm start?) first`);
  console.log("demo: starting Shepherd (npm start) and the example remote services …");
  startService("shepherd", ["scripts/start.ts"]);
  startService("example-remote", ["scripts/example-remote.ts"]);
  await waitUntil(() => reachable(`${SHEPHERD}/healthz`), { timeoutMs: START_TIMEOUT_MS, intervalMs: 500, what: "Shepherd to answer /healthz" });
  await waitUntil(() => reachable(`${REMOTE}/effects`), { timeoutMs: START_TIMEOUT_MS, intervalMs: 250, what: "the example remote" });
}

interface Started {
  id: string;
  shows: string;
}

/** Starts every demo under an id with the run's suffix. */
async function startDemos(): Promise<Started[]> {
  const suffix = Date.now().toString(36);
  const started: Started[] = [];
  for (const { shows, ...definition } of DEMOS) {
    const id = `${definition.name}-${suffix}`;
    const answer = await api("POST", "/v1/workflows", { id, definition });
    if (answer.status !== 201) throw new Error(`starting ${id} answered ${answer.status}: ${answer.text}`);
    started.push({ id, shows });
  }
  return started;
}

async function printStatuses(started: Started[]): Promise<void> {
  console.log("\nworkflow".padEnd(36) + "status".padEnd(18) + "shows");
  for (const { id, shows } of started) {
    const { body } = await api("GET", `/v1/workflows/${id}`);
    console.log(id.padEnd(35) + String(field(body, "status")).padEnd(18) + shows);
  }
}

function printWhereToLook(started: Started[]): void {
  const waiting = started.find((entry) => entry.id.startsWith("approval-"))?.id;
  const escalated = started.find((entry) => entry.id.startsWith("needs-a-person-"))?.id;
  console.log(`
Open the dashboard at ${SHEPHERD}/ in a browser and sign in with ${TOKEN}.
Or look around with curl (the API token is ${TOKEN}):
  npx shepherd list --url ${SHEPHERD} --token ${TOKEN}
  curl -s -H 'Authorization: Bearer ${TOKEN}' ${SHEPHERD}/v1/workflows
  curl -s -H 'Authorization: Bearer ${TOKEN}' ${SHEPHERD}/v1/workflows/${escalated}/diagnosis
  curl -s -H 'Authorization: Bearer ${TOKEN}' ${SHEPHERD}/v1/metrics
Finish the waiting one:
  curl -s -H 'Authorization: Bearer ${TOKEN}' -H 'Content-Type: application/json' ${SHEPHERD}/v1/workflows/${waiting}/events -d '{"event":"approved"}'
Logs: ${LOG_DIR}/. Ctrl-C stops both services.`);
}

async function main(): Promise<void> {
  installCleanup("demo");
  mkdirSync(LOG_DIR, { recursive: true });
  await startServices();
  const started = await startDemos();
  // Long enough for the retries, the compensation and the stall to play out.
  await sleep(12_000);
  await printStatuses(started);
  printWhereToLook(started);
  await new Promise(() => {});
}

main().catch((error) => {
  console.error(`demo: ${errorMessage(error)}`);
  process.exit(1);
});
