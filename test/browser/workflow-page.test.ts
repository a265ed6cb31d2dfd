import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { longestPathLayers } from "../../public/app/workflow/layout.js";
import { workflowStructure } from "../../public/app/workflow/structure.js";
import { REMOTE_URL, api, saveScreenshot } from "./support/harness";
import { openWorkflow, start, stepShows, uniqueId, workflowShows } from "./support/workflows";

const http = (path: string, extra: Record<string, unknown> = {}) => ({ action: { type: "http", url: `${REMOTE_URL}${path}` }, ...extra });

/** Clicks an operator action, then the dialog's confirming button, optionally after filling its field and reason. */
async function act(page: Page, action: string, input?: string, reason?: string): Promise<void> {
  await page.locator(`[data-action="${action}"]`).click();
  await confirm(page, action, input, reason);
}

async function confirm(page: Page, action: string, input?: string, reason?: string): Promise<void> {
  const dialog = page.locator(`dialog[data-confirm="${action}"]`);
  if (input !== undefined) await dialog.locator("textarea").fill(input);
  if (reason !== undefined) await dialog.locator('input[name="reason"]').fill(reason);
  await dialog.locator('button[type="submit"]').click();
  await dialog.waitFor({ state: "hidden" });
}

describe("the workflow page", () => {
  it("follows a workflow to completion without a reload: steps turn succeeded as they run", async () => {
    const id = uniqueId("order");
    await start(id, { name: "order", steps: [{ id: "reserve", ...http("/reserve") }, { id: "cool-off", sleep: { durationMs: 3_000 } }, { id: "ship", ...http("/ship") }] });
    const page = await openWorkflow(id);
    await page.evaluate(() => Object.assign(window, { stillTheSamePage: true }));

    await stepShows(page, "cool-off", "sleeping");
    expect(await page.getByTestId("graph-node-ship").getAttribute("data-status")).toBe("pending");
    await expect.poll(() => page.getByTestId("diagnosis").textContent()).toContain("Sleeping in cool-off since");

    await workflowShows(page, "completed");
    for (const step of ["reserve", "cool-off", "ship"]) await stepShows(page, step, "succeeded");
    expect(await page.getByTestId("workflow-status").textContent()).toBe("completed");
    expect(await page.evaluate(() => (window as unknown as { stillTheSamePage?: boolean }).stillTheSamePage)).toBe(true);
    expect(await page.getByTestId("no-actions").textContent()).toContain("No operator action");
    expect(await page.getByTestId("timeline-step-cool-off").locator(".tl-timer.sleep").count()).toBe(1);
    expect(await page.getByTestId("history").textContent()).toContain("workflow completed");
  });

  it("shows a failed workflow's error with its step and HTTP status, and a redrive completes it", async () => {
    const id = uniqueId("sync");
    // /flaky answers 503 twice per idempotency key: two attempts fail, the redrive's third succeeds.
    await start(id, {
      name: "flaky-sync",
      onFailure: "fail",
      steps: [{ id: "prepare", ...http("/reserve") }, { id: "sync", ...http("/flaky", { retry: { maxAttempts: 2, initialIntervalMs: 100 } }) }, { id: "report", ...http("/ship") }],
    });
    const page = await openWorkflow(id);
    await workflowShows(page, "failed");

    const error = await page.getByTestId("step-error-sync").textContent();
    expect(error).toMatch(/Step sync\s*failed after 2 attempts: HTTP 503/);
    await stepShows(page, "sync", "failed");
    expect(await page.locator('[data-action="pause"]').count()).toBe(0);
    await saveScreenshot(page, "workflow-failed");

    await act(page, "redrive");
    await workflowShows(page, "completed");
    await stepShows(page, "report", "succeeded");
    expect(await page.locator('[data-testid="timeline-step-sync"] .tl-attempt').count()).toBe(3);
  });

  it("says which retry rule decided a step's failure", async () => {
    const id = uniqueId("rules");
    // /decline answers 422, which the default fails at once; this step's list retries it, until its 2 attempts are spent.
    await start(id, { name: "rules", onFailure: "fail", steps: [{ id: "charge", ...http("/decline", { retry: { maxAttempts: 2, initialIntervalMs: 100, retryableStatuses: [422] } }) }] });
    const page = await openWorkflow(id);
    await workflowShows(page, "failed");

    expect(await page.getByTestId("step-error-charge").textContent()).toMatch(/failed after 2 attempts: HTTP 422 — remote answered 422: \{"error":"declined"\} \(retried: the step's retryableStatuses\)/);
  });

  it("opens an attempt to show what it sent and what came back: the 503's body, secrets redacted, a long body cut", async () => {
    const id = uniqueId("exchange");
    const note = "n".repeat(5_000);
    await start(id, {
      name: "exchange",
      onFailure: "fail",
      steps: [{ id: "ship", action: { type: "http", url: `${REMOTE_URL}/unavailable`, headers: { Authorization: "Bearer sk_live_42" }, body: { order: "{{ workflow.id }}", note } }, retry: { maxAttempts: 1 } }],
    });
    const page = await openWorkflow(id);
    await workflowShows(page, "failed");

    const toggle = page.getByTestId("open-attempt-ship-1");
    expect(await toggle.getAttribute("aria-expanded")).toBe("false");
    await toggle.click();
    const exchange = page.getByTestId("exchange-ship-1");
    const request = exchange.getByTestId("request");
    const response = exchange.getByTestId("response");
    await response.getByTestId("response-status").waitFor();
    expect(await toggle.getAttribute("aria-expanded")).toBe("true");

    expect(await request.locator(".target").textContent()).toBe(`POST ${REMOTE_URL}/unavailable`);
    const requestText = await request.textContent();
    expect(requestText).toContain("authorization[redacted]");
    expect(requestText).toContain("shepherd-task-token[redacted]");
    expect(requestText).not.toContain("sk_live_42");
    expect(await request.getByTestId("truncated").textContent()).toMatch(/^Only its first 4096 bytes are kept, of 50\d\d\.$/);
    expect(await response.getByTestId("response-status").textContent()).toBe("HTTP 503");
    // The body the 503 came with, pretty-printed as JSON.
    expect(await response.getByTestId("body").textContent()).toBe(JSON.stringify({ error: "down for maintenance" }, null, 2));
    expect(await response.getByTestId("truncated").count()).toBe(0);
    await saveScreenshot(page, "workflow-attempt-exchange");

    await toggle.click();
    expect(await page.getByTestId("exchange-ship-1").count()).toBe(0);
  });

  it("pauses a running workflow with a reason and resumes it; the history says who acted and why", async () => {
    const id = uniqueId("hold");
    await start(id, { name: "hold", steps: [{ id: "reserve", ...http("/reserve") }, { id: "hold", sleep: { durationMs: 4_000 } }, { id: "ship", ...http("/ship") }] });
    const page = await openWorkflow(id);
    await stepShows(page, "hold", "sleeping");

    await act(page, "pause", undefined, "deploy freeze until 14:00");
    await workflowShows(page, "paused");
    expect(await page.getByTestId("diagnosis").textContent()).toMatch(/Paused by an operator since \d\d:\d\d:\d\d/);
    expect(await page.locator('[data-action="pause"]').count()).toBe(0);

    await act(page, "resume");
    await workflowShows(page, "completed");
    await stepShows(page, "ship", "succeeded");
    expect(await page.getByTestId("history").textContent()).toContain("workflow resumed");
    // The test's token has no name: it acts as its tenant. The resume was given no reason.
    const history = page.getByTestId("history");
    expect(await history.locator('tr[data-type="workflow_paused"] td.acted-by').textContent()).toMatch(/^\s*browser\s*deploy freeze until 14:00\s*$/);
    expect(await history.locator('tr[data-type="workflow_resumed"] td.acted-by .actor').textContent()).toBe("browser");
    expect(await history.locator('tr[data-type="workflow_resumed"] td.acted-by .reason').count()).toBe(0);
  });

  it("says when a scheduled workflow starts, offers no pause before it, and it starts then by itself", async () => {
    const id = uniqueId("later");
    await api("POST", "/v1/workflows", { id, definition: { name: "later", steps: [{ id: "ship", ...http("/ship") }] }, startDelayMs: 5_000 });
    const page = await openWorkflow(id);
    await workflowShows(page, "scheduled");

    expect(await page.getByTestId("workflow-start").textContent()).toMatch(/^Starts\s*\d\d:\d\d:\d\d/);
    await expect.poll(() => page.getByTestId("diagnosis").textContent()).toMatch(/Scheduled: it starts at \d\d:\d\d:\d\d; nothing runs before/);
    expect(await page.locator('[data-action="pause"]').count()).toBe(0);
    expect(await page.locator('[data-action="cancel"]').count()).toBe(1);
    await stepShows(page, "ship", "pending");

    await workflowShows(page, "completed");
    expect(await page.getByTestId("workflow-start").textContent()).toMatch(/^Scheduled for\s*\d\d:\d\d:\d\d/);
    expect(await page.getByTestId("history").textContent()).toContain("workflow scheduled");
  });

  it("cancels a scheduled workflow before it starts: nothing of it runs", async () => {
    const id = uniqueId("later-cancelled");
    await api("POST", "/v1/workflows", { id, definition: { name: "later", steps: [{ id: "ship", ...http("/ship") }] }, startDelayMs: 3_600_000 });
    const page = await openWorkflow(id);
    await workflowShows(page, "scheduled");

    await page.locator('[data-action="cancel"]').click();
    expect(await page.locator('dialog[data-confirm="cancel"]').textContent()).toContain("It has not started");
    await confirm(page, "cancel");
    await workflowShows(page, "cancelled");
    await stepShows(page, "ship", "cancelled");
  });

  it("says what a waiting workflow waits for, and an event sent from the page lets it continue", async () => {
    const id = uniqueId("approval");
    await start(id, {
      name: "approval",
      steps: [{ id: "reserve", ...http("/reserve") }, { id: "approval", waitForEvent: { event: "approved", timeoutMs: 3_600_000 } }, { id: "ship", ...http("/ship") }],
    });
    const page = await openWorkflow(id);
    await stepShows(page, "approval", "waiting");
    await expect
      .poll(() => page.getByTestId("diagnosis").textContent())
      .toMatch(/Waiting for event approved since \d\d:\d\d:\d\d, times out at \d\d:\d\d:\d\d/);
    await saveScreenshot(page, "workflow-waiting");

    await page.locator('[data-action="send-event"]').click();
    expect(await page.locator('dialog[data-confirm="send-event"] input[name="event"]').inputValue()).toBe("approved");
    await confirm(page, "send-event", '{"by": "ops"}');
    await workflowShows(page, "completed");
    await stepShows(page, "approval", "succeeded");
    expect(await page.getByTestId("history").textContent()).toContain("event consumed");
  });

  it("lets an operator skip a failed step with an output while the workflow needs attention", async () => {
    const id = uniqueId("attention");
    await start(id, {
      name: "needs-a-person",
      onFailure: { escalate: { afterMs: 3_600_000, then: "compensate" } },
      steps: [{ id: "reserve", ...http("/reserve") }, { id: "charge", ...http("/decline") }, { id: "ship", ...http("/ship") }],
    });
    const page = await openWorkflow(id);
    await workflowShows(page, "needs_attention");
    expect(await page.getByTestId("diagnosis").textContent()).toMatch(/Needs attention: charge failed for good \(HTTP 422\)/);
    expect(await page.locator('[data-action="retry-charge"]').count()).toBe(1);

    await page.locator('[data-action="skip-charge"]').click();
    const dialog = page.locator('dialog[data-confirm="skip-charge"]');
    await dialog.locator("textarea").fill("not json");
    await dialog.locator('button[type="submit"]').click();
    expect(await dialog.getByRole("alert").textContent()).toContain("not valid JSON");
    await dialog.locator("textarea").fill('{"chargeId": "manual"}');
    await dialog.locator('button[type="submit"]').click();

    await workflowShows(page, "completed");
    await stepShows(page, "charge", "skipped");
    await stepShows(page, "ship", "succeeded");
  });

  it("draws the DAG and the retries of a completed run (the README's screenshot)", async () => {
    // The same content under the same name is the same version: a second run of this test publishes nothing new.
    const name = "order-fulfillment";
    const definition = {
      name,
      steps: [
        { id: "reserve", ...http("/reserve", { compensate: { type: "http", url: `${REMOTE_URL}/release` } }) },
        { id: "fraud-check", dependsOn: [], ...http("/flaky", { retry: { maxAttempts: 4, initialIntervalMs: 300 } }) },
        { id: "charge", dependsOn: ["reserve", "fraud-check"], ...http("/charge", { compensate: { type: "http", url: `${REMOTE_URL}/refund` } }) },
        { id: "cool-off", dependsOn: ["charge"], sleep: { durationMs: 800 } },
        { id: "ship", dependsOn: ["cool-off"], ...http("/ship") },
        { id: "notify", dependsOn: ["charge"], ...http("/async") },
      ],
    };
    await api("PUT", `/v1/definitions/${name}`, definition);
    const id = uniqueId("order");
    await api("POST", "/v1/workflows", { id, definitionRef: { name }, input: { sku: "book-123", amount: 42 } });
    const page = await openWorkflow(id);
    await workflowShows(page, "completed");

    // The fan-in: charge waits for both reserve and fraud-check.
    for (const edge of ["reserve->charge", "fraud-check->charge", "charge->cool-off", "charge->notify", "cool-off->ship"]) {
      expect(await page.locator(`[data-edge="${edge}"]`).count(), edge).toBe(1);
    }
    expect(await page.locator('[data-testid="timeline-step-fraud-check"] .tl-attempt.failed').count()).toBe(2);
    expect(await page.locator('[data-testid="timeline-step-fraud-check"] .tl-backoff').count()).toBe(2);
    expect(await page.getByTestId("diagnosis").textContent()).toContain("Retried fraud-check: 3 attempts (HTTP 503 ×2)");

    await page.getByTestId("graph-node-fraud-check").click();
    await page.locator('[data-testid="timeline-step-fraud-check"].selected').waitFor();
    await saveScreenshot(page, "workflow");
  });
});

describe("the step graph's shape", () => {
  it("puts each step one column right of its furthest dependency", () => {
    const steps = [
      { id: "a", dependsOn: [] },
      { id: "b", dependsOn: ["a"] },
      { id: "c", dependsOn: [] },
      { id: "d", dependsOn: ["b", "c"] },
    ];
    expect(Object.fromEntries(longestPathLayers(steps))).toEqual({ a: 0, b: 1, c: 0, d: 2 });
  });

  it("takes each step's kind and dependencies from the view, dropping names that are not its steps", () => {
    const step = (id: string, kind: string, dependsOn: string[]) => ({ id, kind, dependsOn, status: "pending", attempt: 0, attempts: [] });
    const view = { steps: [step("a", "action", []), step("b", "sleep", []), step("c", "waitForEvent", ["a", "b", "gone", "c"])] };
    expect(workflowStructure(view).map((found: { id: string; dependsOn: string[]; kind: string }) => [found.id, found.dependsOn, found.kind])).toEqual([
      ["a", [], "action"],
      ["b", [], "sleep"],
      ["c", ["a", "b"], "waitForEvent"],
    ]);
  });
});
