import type { Page } from "playwright-core";
import { afterAll, describe, expect, it } from "vitest";
import { api, openDashboard, REMOTE_URL, saveScreenshot } from "./support/harness";
import { expectFitsAPhone } from "./support/phone";
import { SETTLE_MS, start, uniqueId } from "./support/workflows";

// Two webhooks of the browser tests' tenant: one whose receiver answers 200, one whose receiver answers 503 every time.
// Every workflow of the tenant is announced to them, so they go with this file.
const healthy = uniqueId("ops");
const down = uniqueId("pager");
const made: string[] = [];

async function subscribe(id: string, path: string): Promise<void> {
  await api("PUT", `/v1/webhooks/${id}`, { url: `${REMOTE_URL}/${path}`, events: ["workflow.completed"] });
  made.push(id);
}

afterAll(async () => {
  for (const id of made) await api("DELETE", `/v1/webhooks/${id}`);
});

/** A workflow that completes at once, so its `workflow.completed` is delivered to both webhooks. */
async function completedWorkflow(): Promise<string> {
  const id = uniqueId("announced");
  await start(id, { name: "announced", steps: [{ id: "reserve", action: { type: "http", url: `${REMOTE_URL}/reserve` } }] });
  return id;
}

async function openWebhooks(): Promise<Page> {
  const { page } = await openDashboard();
  await page.locator("header.top nav").getByRole("link", { name: "Webhooks", exact: true }).click();
  await page.getByRole("heading", { name: "Webhooks", level: 1 }).waitFor();
  return page;
}

/** The row of the workflow's delivery, once the page (which refreshes itself) shows one. */
async function deliveryOf(page: Page, workflowId: string) {
  const row = page.locator(`[data-testid="delivery-list"] tr:has(a[href="#/workflows/${workflowId}"])`);
  await row.waitFor({ timeout: SETTLE_MS });
  return row;
}

describe("the webhooks page", () => {
  it("lists the tenant's webhooks with their URL and events, and a webhook's deliveries as they happen", async () => {
    await subscribe(healthy, "hooks");
    const page = await openWebhooks();
    const listed = page.locator(`[data-testid="webhook-list"] tr[data-webhook="${healthy}"]`);
    await listed.waitFor();
    expect(await listed.getByTestId("webhook-url").textContent()).toBe(`${REMOTE_URL}/hooks`);
    expect(await listed.getByTestId("webhook-events").textContent()).toBe("workflow.completed");
    await saveScreenshot(page, "webhooks");

    await listed.getByRole("link", { name: healthy }).click();
    await page.getByTestId("webhook-page").waitFor();
    expect(page.url()).toContain(`#/webhooks/${healthy}`);
    // Made while the page is open: the page shows it without a reload.
    const id = await completedWorkflow();
    const row = await deliveryOf(page, id);
    await expect.poll(() => row.getAttribute("data-status"), { timeout: SETTLE_MS }).toBe("delivered");
    expect(await row.textContent()).toContain("workflow.completed");
    expect(await row.getByTestId("delivery-status").textContent()).toBe("delivered");
    expect(await row.getByTestId("delivery-attempts").textContent()).toBe("1");
    expect(await row.getByTestId("delivery-answer").textContent()).toBe("HTTP 200");
    expect(await row.getByTestId("delivery-next").textContent()).toBe("—");
    expect(await page.getByTestId("failing-deliveries").count()).toBe(0);
    await saveScreenshot(page, "webhook-delivered");
  });

  it("marks a delivery whose receiver fails: its status, tries, last answer and error, and about when it goes again", async () => {
    await subscribe(down, "unavailable");
    const id = await completedWorkflow();
    const { page } = await openDashboard({ path: `/#/webhooks/${down}` });
    const row = await deliveryOf(page, id);

    expect(await row.getAttribute("data-status")).toBe("failing");
    expect(await row.getByTestId("delivery-status").textContent()).toBe("failing");
    expect(Number(await row.getByTestId("delivery-attempts").textContent())).toBeGreaterThanOrEqual(1);
    expect(await row.getByTestId("delivery-answer").textContent()).toMatch(/^HTTP 503/);
    expect(await row.getByTestId("delivery-error").textContent()).toBe("receiver answered 503");
    expect(await row.getByTestId("delivery-next").textContent()).toMatch(/^about \d\d:\d\d:\d\d\s*(due now|now|in \d+ s)$/);
    expect(await page.getByTestId("failing-deliveries").textContent()).toMatch(/failing and being retried/);
    // The page follows the retries on its own.
    const attempts = Number(await row.getByTestId("delivery-attempts").textContent());
    await expect.poll(async () => Number(await row.getByTestId("delivery-attempts").textContent()), { timeout: SETTLE_MS }).toBeGreaterThan(attempts);
    await saveScreenshot(page, "webhook-failing");

    await expectFitsAPhone(page);
    await saveScreenshot(page, "webhook-failing-phone");
  });

  it("says so for a webhook that does not exist", async () => {
    const { page } = await openDashboard({ path: "/#/webhooks/no-such-hook" });
    const alert = page.getByRole("alert");
    await alert.waitFor();
    expect(await alert.textContent()).toBe('No webhook "no-such-hook" for this token\'s tenant.');
  });
});
