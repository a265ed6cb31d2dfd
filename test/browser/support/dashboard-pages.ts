// Every page of the dashboard, in one list, for the checks that visit them all (accessibility, a phone's width).
// A page added to the dashboard joins those checks with one entry here: where it opens, what shows once it has
// loaded, and what it needs to show something (a seeded workflow, a schedule, answers set in the browser).
import type { Page, Route } from "playwright-core";
import { afterAll } from "vitest";
import { REMOTE_URL, api, openDashboard } from "./harness";
import { SETTLE_MS, uniqueId } from "./workflows";

export interface DashboardPage {
  /** The page in a few words: the test's title and the screenshot's file name. */
  name: string;
  /** Seeds what the page shows (once per test file), then says where it opens. */
  path: () => Promise<string>;
  /** A selector that matches once the page shows its content. */
  ready: string;
  /** The sign-in page is the only one seen signed out. */
  signedIn?: boolean;
  /** Answers set in the browser, for content the shared service cannot promise (a dead letter). */
  beforeLoad?: (page: Page) => Promise<void>;
  /** What a user does there before the check, when the check is of what that opens (a dialog). */
  then?: (page: Page) => Promise<void>;
}

const http = (path: string, extra: Record<string, unknown> = {}) => ({ action: { type: "http", url: `${REMOTE_URL}${path}` }, ...extra });

/** What a seed leaves that would go on acting on other tests (a webhook, a workflow that waits): undone after the file. */
const cleanups: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup().catch(() => undefined);
});
const cancelAfterwards = (id: string) => cleanups.push(() => api("POST", `/v1/workflows/${id}/cancel`, { reason: "end of the every-page checks" }));

/** Each seed runs once per test file, however many pages need it. */
function once<T>(seed: () => Promise<T>): () => Promise<T> {
  let seeded: Promise<T> | undefined;
  return () => (seeded ??= seed());
}

async function startAndSettle(id: string, definition: Record<string, unknown>, settled: string[], input?: unknown): Promise<string> {
  await api("POST", "/v1/workflows", { id, definition, ...(input === undefined ? {} : { input }) });
  const deadline = Date.now() + SETTLE_MS;
  while (!settled.includes((await api("GET", `/v1/workflows/${id}`)).status)) {
    if (Date.now() > deadline) throw new Error(`workflow ${id} did not reach ${settled.join(" or ")} in ${SETTLE_MS} ms`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return id;
}

/** A fan-in with retries, a sleep, a compensation and a 202 job: most of what the workflow page draws. */
const orderWorkflow = once(() =>
  startAndSettle(
    uniqueId("every-page-order"),
    {
      name: "every-page-order",
      steps: [
        { id: "reserve-inventory", ...http("/reserve", { compensate: { type: "http", url: `${REMOTE_URL}/release` } }) },
        { id: "fraud-check", dependsOn: [], ...http("/flaky", { retry: { maxAttempts: 4, initialIntervalMs: 100 } }) },
        { id: "charge", dependsOn: ["reserve-inventory", "fraud-check"], ...http("/charge") },
        { id: "cool-off", dependsOn: ["charge"], sleep: { durationMs: 200 } },
        { id: "notify-customer-by-email", dependsOn: ["charge"], ...http("/async") },
      ],
    },
    ["completed"],
  ),
);

/** A failed step and the operator's actions on it. */
const attentionWorkflow = once(() =>
  startAndSettle(
    uniqueId("every-page-attention"),
    { name: "every-page-attention", onFailure: { escalate: { afterMs: 3_600_000, then: "compensate" } }, steps: [{ id: "reserve", ...http("/reserve") }, { id: "charge", ...http("/decline") }] },
    ["needs_attention"],
  ),
);

const mapWorkflow = once(() =>
  startAndSettle(
    uniqueId("every-page-map"),
    {
      name: "every-page-map",
      steps: [{ id: "thumbs", map: { items: "{{ input.paths }}", maxConcurrency: 4, toleratedFailures: 1, step: { action: { type: "http", url: `${REMOTE_URL}/{{ item }}` } } } }],
    },
    ["completed"],
    { paths: ["reserve", "decline", "reserve", "reserve", "reserve", "reserve"] },
  ),
);

const schedule = once(async () => {
  const id = uniqueId("every-page-nightly-report");
  await api("POST", "/v1/schedules", { id, cron: "0 3 * * *", timezone: "Europe/Paris", workflow: { definition: { name: "every-page-report", steps: [{ id: "only", ...http("/ship") }] } } });
  return id;
});

/** A worker step no worker takes: its pool is listed with a pending task. */
const pool = once(async () => {
  const id = uniqueId("every-page-worker");
  await api("POST", "/v1/workflows", { id, definition: { name: "every-page-worker", steps: [{ id: "train", action: { type: "worker", pool: "every-page-gpu" } }] } });
  cancelAfterwards(id);
  return id;
});

/** A bulk job both of whose workflows refuse its action: its page lists why. */
const bulkJob = once(async () => {
  const name = uniqueId("every-page-bulk");
  const ids = [`${name}-1`, `${name}-2`];
  for (const id of ids) await api("POST", "/v1/workflows", { id, definition: { name, steps: [{ id: "approve", waitForEvent: { event: "approved", timeoutMs: 3_600_000 } }] } });
  await api("POST", `/v1/workflows/${ids[0]}/cancel`);
  cancelAfterwards(ids[1]!);
  const job = await api<{ id: string }>("POST", "/v1/bulk", { action: "resume", filter: { ids }, reason: "checking every page" });
  const deadline = Date.now() + SETTLE_MS;
  while ((await api("GET", `/v1/bulk/${job.id}`)).status !== "done") {
    if (Date.now() > deadline) throw new Error(`bulk job ${job.id} did not end in ${SETTLE_MS} ms`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return job.id;
});

/** A definition published twice: its page lists both versions and draws the latest. */
const definition = once(async () => {
  const name = uniqueId("every-page-definition");
  const step = (id: string, extra: Record<string, unknown> = {}) => ({ id, ...http(`/${id === "charge-the-card" ? "charge" : "reserve"}`), ...extra });
  await api("PUT", `/v1/definitions/${name}`, { name, steps: [step("reserve-inventory"), step("charge-the-card")] });
  await api("PUT", `/v1/definitions/${name}`, {
    name,
    steps: [step("reserve-inventory"), step("fraud-check", { dependsOn: [] }), step("charge-the-card", { dependsOn: ["reserve-inventory", "fraud-check"] }), { id: "approval", waitForEvent: { event: "approved", timeoutMs: 60_000 } }],
  });
  return name;
});

/** A webhook of the tenant and one delivery to it: every workflow that completes is announced to it, until the file ends. */
const webhook = once(async () => {
  const id = uniqueId("every-page-hook");
  await api("PUT", `/v1/webhooks/${id}`, { url: `${REMOTE_URL}/hooks`, events: ["workflow.completed"] });
  cleanups.push(() => api("DELETE", `/v1/webhooks/${id}`));
  await startAndSettle(uniqueId("every-page-announced"), { name: "every-page-announced", steps: [{ id: "reserve", ...http("/reserve") }] }, ["completed"]);
  return id;
});

/** A breaker open and one closed, as the API would list them: opening one for real takes a failing host and minutes. */
async function answerTargets(page: Page): Promise<void> {
  const targets = [
    { host: "payments.example.com", state: "open", failures: 5, openUntil: Date.now() + 240_000, parked: 2 },
    { host: "inventory.example.com", state: "closed", failures: 1, openUntil: null, parked: 0 },
  ];
  await page.route("**/v1/targets*", (route: Route) => route.fulfill({ json: { targets } }));
}

/** The service's STARTS queue has none unless a producer erred: one, as the API would list it. */
async function answerDeadLetters(page: Page): Promise<void> {
  const deadLetter = {
    messageId: "m-every-page",
    tenant: "browser",
    workflowId: "order-every-page",
    error: {
      code: "validation_failed",
      message: "Invalid message: start.definition.steps: Too small: expected array to have >=1 items.",
      details: [{ path: ["start", "definition", "steps"], message: "Too small: expected array to have >=1 items", code: "too_small" }],
    },
    body: JSON.stringify({ tenant: "browser", start: { id: "order-every-page", definition: { name: "order", steps: [] }, input: { note: "x".repeat(300) } } }),
    bodyTruncated: false,
    attempts: 1,
    firstSeenAt: Date.now() - 60_000,
    lastSeenAt: Date.now() - 60_000,
  };
  await page.route("**/v1/starts/dead-letters*", (route: Route) => route.fulfill({ json: { deadLetters: [deadLetter] } }));
}

const workflowPath = (seed: () => Promise<string>) => async () => `/#/workflows/${encodeURIComponent(await seed())}`;
const fixed = (path: string) => () => Promise.resolve(path);

export const DASHBOARD_PAGES: DashboardPage[] = [
  { name: "sign-in", path: fixed("/"), signedIn: false, ready: 'input[name="token"]' },
  { name: "workflows", path: async () => (await orderWorkflow(), "/#/workflows"), ready: '[data-testid="workflow-list"][aria-busy="false"]' },
  { name: "workflow", path: workflowPath(orderWorkflow), ready: '[data-testid="workflow-page"][data-status="completed"] [data-testid="timeline"]' },
  {
    name: "workflow-attempt-opened",
    path: workflowPath(orderWorkflow),
    ready: '[data-testid="workflow-page"][data-status="completed"] [data-testid="open-attempt-fraud-check-1"]',
    then: async (page) => {
      await page.getByTestId("open-attempt-fraud-check-1").click();
      await page.locator('.exchange [data-testid="response-status"]').waitFor({ timeout: SETTLE_MS });
    },
  },
  { name: "workflow-needs-attention", path: workflowPath(attentionWorkflow), ready: '[data-testid="workflow-page"][data-status="needs_attention"] [data-testid="step-actions-charge"]' },
  {
    name: "workflow-cancel-dialog",
    path: workflowPath(attentionWorkflow),
    ready: '[data-testid="workflow-page"] [data-action="cancel"]',
    then: (page) => page.locator('[data-action="cancel"]').click(),
  },
  { name: "workflow-map", path: workflowPath(mapWorkflow), ready: '[data-testid="workflow-page"][data-status="completed"] [data-testid="map-items-thumbs"] tbody tr' },
  { name: "metrics", path: fixed("/#/metrics"), ready: '[data-testid="chart-outcomes"]' },
  { name: "schedules", path: async () => (await schedule(), "/#/schedules"), ready: '[data-testid="schedule-list"]' },
  { name: "definitions", path: async () => (await definition(), "/#/definitions"), ready: '[data-testid="definition-list"]' },
  { name: "definition", path: async () => `/#/definitions/${await definition()}`, ready: '[data-testid="version-view"][data-version="2"] [data-testid="step-graph"]' },
  { name: "pools", path: async () => (await pool(), "/#/pools"), ready: '[data-testid="pool-list"]' },
  { name: "webhooks", path: async () => (await webhook(), "/#/webhooks"), ready: '[data-testid="webhook-list"]' },
  { name: "webhook", path: async () => `/#/webhooks/${await webhook()}`, ready: '[data-testid="delivery-list"] tbody tr' },
  { name: "targets", path: fixed("/#/targets"), ready: '[data-testid="target-list"]', beforeLoad: answerTargets },
  { name: "dead-letters", path: fixed("/#/dead-letters"), ready: '[data-testid="dead-letter-list"]', beforeLoad: answerDeadLetters },
  { name: "bulk-jobs", path: async () => (await bulkJob(), "/#/bulk"), ready: '[data-testid="bulk-list"]' },
  { name: "bulk-job", path: async () => `/#/bulk/${await bulkJob()}`, ready: '[data-testid="bulk-errors"]' },
  { name: "api-reference", path: fixed("/docs"), signedIn: false, ready: "text=Workflows that finish or unwind cleanly." },
];

/** Opens one of the pages at this size, once it shows its content (and whatever its `then` opens). */
export async function openDashboardPage(entry: DashboardPage, viewport?: { width: number; height: number }): Promise<Page> {
  const path = await entry.path();
  const { page } = await openDashboard({ path, viewport, signedIn: entry.signedIn ?? true, beforeLoad: entry.beforeLoad });
  await page.locator(entry.ready).first().waitFor({ timeout: SETTLE_MS });
  await entry.then?.(page);
  return page;
}
