// Bulk actions from the dashboard: select workflows in the list (some rows, or every one the filter matches), confirm
// the action, and follow the bulk job it creates on its page, then in the list of jobs.
import type { Locator, Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { api, openDashboard, saveScreenshot } from "./support/harness";
import { uniqueId } from "./support/workflows";

/** A real service: the job acts a few workflows at a time and the page refreshes every 2 s. */
const SEEN_WITHIN = { timeout: 20_000, interval: 250 };

async function startWaiting(name: string, count: number): Promise<string[]> {
  const ids = Array.from({ length: count }, (_, i) => `${name}-${i + 1}`);
  for (const id of ids) await api("POST", "/v1/workflows", { id, definition: { name, steps: [{ id: "approve", waitForEvent: { event: "approved", timeoutMs: 3_600_000 } }] } });
  return ids;
}

const row = (page: Page, id: string): Locator => page.locator(`[data-testid="workflow-list"] tr[data-workflow-id="${id}"]`);
const statusOf = async (id: string): Promise<string> => (await api("GET", `/v1/workflows/${encodeURIComponent(id)}`)).status;

/** The list filtered by the definition name, once every one of `ids` is on it. */
async function openList(name: string, ids: string[]): Promise<Page> {
  const { page } = await openDashboard({ path: `/#/workflows?q=${name}` });
  await expect.poll(() => page.locator('[data-testid="workflow-list"] tbody tr').count(), SEEN_WITHIN).toBe(ids.length);
  return page;
}

/** Opens the action's dialog from the bulk bar, gives the reason and confirms. */
async function confirmBulk(page: Page, action: string, label: string, reason?: string): Promise<Locator> {
  await page.locator(`[data-testid="bulk-bar"] [data-action="bulk-${action}"]`).click();
  const dialog = page.locator(`dialog[data-confirm="bulk-${action}"]`);
  if (reason) await dialog.getByRole("textbox").fill(reason);
  await dialog.getByRole("button", { name: `${label} them` }).click();
  return dialog;
}

describe("bulk actions in the workflows list", () => {
  it("cancels the rows selected after a confirmation, and the job's page shows its progress to done", async () => {
    const name = uniqueId("bulk-rows");
    const ids = await startWaiting(name, 3);
    const page = await openList(name, ids);

    await row(page, ids[0]!).getByRole("checkbox").check();
    await row(page, ids[2]!).getByRole("checkbox").check();
    expect(await page.getByTestId("selection").textContent()).toBe("2 selected workflows");
    const dialog = await page.locator('[data-testid="bulk-bar"] [data-action="bulk-cancel"]').click().then(() => page.locator('dialog[data-confirm="bulk-cancel"]'));
    expect(await dialog.getByRole("heading").textContent()).toBe("Cancel 2 selected workflows?");
    // The dialog's own buttons: neither is a bare "Cancel", which would read as the action it asks about.
    expect(await dialog.getByRole("button").allTextContents()).toEqual(["Keep them running", "Cancel them"]);
    await dialog.getByRole("button", { name: "Keep them running" }).click();
    await dialog.waitFor({ state: "hidden" });
    expect(await statusOf(ids[0]!)).toBe("running");

    await confirmBulk(page, "cancel", "Cancel", "cleaning up the test run");
    await page.waitForURL(/#\/bulk\/[0-9a-f-]+$/);
    const progress = page.getByTestId("bulk-progress");
    await expect.poll(() => progress.getAttribute("data-status"), SEEN_WITHIN).toBe("done");
    expect([await progress.getAttribute("data-matched"), await progress.getAttribute("data-done"), await progress.getAttribute("data-failed")]).toEqual(["2", "2", "0"]);
    expect(await progress.textContent()).toContain("2 / 2 done");
    expect(await page.locator("dl.bulk-facts").textContent()).toContain("cleaning up the test run");
    await saveScreenshot(page, "bulk-job");

    expect(await Promise.all(ids.map(statusOf))).toEqual(["cancelled", "running", "cancelled"]);
    // Each cancel is recorded as the signed-in token's, with the reason given in the dialog.
    const { events } = await api("GET", `/v1/workflows/${ids[0]}/history`);
    expect(events.filter((e: { type: string }) => e.type === "operator_action").map((e: { data: unknown }) => e.data)).toEqual([{ action: "cancel", actor: "browser", reason: "cleaning up the test run" }]);
  });

  it("selects every workflow the filter matches, beyond the page, and pauses them all; the jobs list shows the job", async () => {
    const name = uniqueId("bulk-all");
    const ids = await startWaiting(name, 3);
    const { page } = await openDashboard({ path: `/#/workflows?q=${name}&limit=10` });
    await expect.poll(() => page.locator('[data-testid="workflow-list"] tbody tr').count(), SEEN_WITHIN).toBe(3);
    // Two per page: "all matching" reaches the third, on the next page.
    await page.goto(page.url().replace("limit=10", "limit=2"));
    await expect.poll(() => page.locator('[data-testid="workflow-list"] tbody tr').count(), SEEN_WITHIN).toBe(2);

    await page.getByTestId("select-page").check();
    await page.getByTestId("select-all-matching").click();
    expect(await page.getByTestId("selection").textContent()).toBe(`Every workflow of definition ${name}, on every page`);
    // Every row stays ticked, and cannot be unticked alone, while the selection is the filter's.
    expect(await page.locator('[data-testid="workflow-list"] tbody tr').first().getByRole("checkbox").isDisabled()).toBe(true);
    await saveScreenshot(page, "bulk-selection");
    await confirmBulk(page, "pause", "Pause");
    await page.waitForURL(/#\/bulk\/[0-9a-f-]+$/);
    const jobId = page.url().split("/").at(-1)!;
    await expect.poll(() => page.getByTestId("bulk-progress").getAttribute("data-done"), SEEN_WITHIN).toBe("3");
    expect(await Promise.all(ids.map(statusOf))).toEqual(["paused", "paused", "paused"]);

    await page.getByRole("link", { name: "Bulk jobs" }).click();
    const listed = page.locator(`[data-testid="bulk-list"] tr[data-bulk-id="${jobId}"]`);
    await expect.poll(() => listed.getAttribute("data-status"), SEEN_WITHIN).toBe("done");
    expect(await listed.textContent()).toContain(`definition ${name}`);
    await saveScreenshot(page, "bulk-jobs");
  });

  it("shows the workflows that refused the action, with why", async () => {
    const name = uniqueId("bulk-refused");
    const ids = await startWaiting(name, 2);
    await api("POST", `/v1/workflows/${ids[0]}/cancel`);
    const page = await openList(name, ids);

    await page.getByTestId("select-page").check();
    await confirmBulk(page, "resume", "Resume");
    await page.waitForURL(/#\/bulk\/[0-9a-f-]+$/);

    await expect.poll(() => page.getByTestId("bulk-progress").getAttribute("data-failed"), SEEN_WITHIN).toBe("2");
    const refusals = page.getByTestId("bulk-errors");
    expect(await refusals.locator("tbody tr").count()).toBe(2);
    expect(await refusals.textContent()).toContain("conflict");
  });
});
