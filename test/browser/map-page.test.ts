import type { Page, Route } from "playwright-core";
import { describe, expect, it } from "vitest";
import { foldItemEvents, foldWords } from "../../public/app/workflow/history-fold.js";
import { REMOTE_URL, saveScreenshot } from "./support/harness";
import { SETTLE_MS, openWorkflow, start, stepShows, uniqueId, workflowShows } from "./support/workflows";

/** Sixty items, two of which the remote declines (422, for good): tolerated, so the map succeeds. */
const DECLINED = [7, 43];
const ITEMS = Array.from({ length: 60 }, (_, index) => (DECLINED.includes(index) ? "decline" : "reserve"));

function thumbnails(name: string) {
  return {
    name,
    steps: [
      { id: "thumbs", map: { items: "{{ input.paths }}", maxConcurrency: 8, toleratedFailures: 2, step: { action: { type: "http", url: `${REMOTE_URL}/{{ item }}` } } } },
      { id: "ship", action: { type: "http", url: `${REMOTE_URL}/ship` } },
    ],
  };
}

const rowIndexes = (page: Page) => page.locator('[data-testid="map-items-thumbs"] tbody tr').evaluateAll((rows) => rows.map((row) => Number(row.getAttribute("data-index"))));

describe("a map step on the workflow page", () => {
  it("shows the map's progress out of its total and pages through its items, filtered by status", async () => {
    const id = uniqueId("thumbs");
    await start(id, thumbnails("thumbnails"), { paths: ITEMS });
    const page = await openWorkflow(id);
    await workflowShows(page, "completed");
    await stepShows(page, "thumbs", "succeeded");

    const progress = page.getByTestId("map-progress-thumbs");
    expect([await progress.getAttribute("data-succeeded"), await progress.getAttribute("data-failed")]).toEqual(["58", "2"]);
    expect(await progress.textContent()).toMatch(/58 \/ 60 succeeded · 2 failed/);
    expect(await page.getByTestId("graph-node-thumbs").textContent()).toContain("succeeded · map 58/60");
    expect(await page.getByTestId("timeline-step-thumbs").locator(".tl-timer.map").textContent()).toBe("60 items");

    await expect.poll(() => rowIndexes(page)).toEqual(Array.from({ length: 25 }, (_, i) => i));
    const items = page.getByTestId("map-items-thumbs");
    await items.getByRole("button", { name: "Next →" }).click();
    await expect.poll(() => rowIndexes(page)).toEqual(Array.from({ length: 25 }, (_, i) => 25 + i));
    await items.getByRole("button", { name: "Next →" }).click();
    await expect.poll(() => rowIndexes(page)).toEqual(Array.from({ length: 10 }, (_, i) => 50 + i));
    expect(await items.getByRole("button", { name: "Next →" }).isDisabled()).toBe(true);
    await items.getByRole("button", { name: "← Previous" }).click();
    await expect.poll(() => items.getByTestId("items-page").textContent()).toBe("Page 2");

    await items.locator('select[name="item-status-thumbs"]').selectOption("failed");
    await expect.poll(() => rowIndexes(page)).toEqual(DECLINED);
    expect(await items.locator('tr[data-index="7"]').textContent()).toContain("HTTP 422");
    expect(await items.locator("nav.pager").count()).toBe(0);
    await saveScreenshot(page, "workflow-map");
  });

  it("folds the items' events in the history into one line per map, and lists them on request", async () => {
    const id = uniqueId("thumbs");
    await start(id, thumbnails("thumbnails"), { paths: ITEMS });
    const page = await openWorkflow(id);
    await workflowShows(page, "completed");

    const history = page.getByTestId("history");
    await expect.poll(() => history.getByTestId("history-map-thumbs").textContent()).toMatch(/^thumbs: 60 items — 58 succeeded, 2 failed \(\d+ item events folded\)$/);
    const stepsListed = () => history.locator("table.events button.step-link").allTextContents();
    expect((await stepsListed()).filter((step) => step.includes("#"))).toEqual([]);
    await history.getByRole("checkbox", { name: "Newest first" }).uncheck();
    expect(await history.locator('tr[data-type="map_started"]').count()).toBe(1);

    await history.locator('input[name="unfold-items"]').check();
    await expect.poll(async () => (await stepsListed()).some((step) => /^thumbs#\d+$/.test(step))).toBe(true);
  });

  it("follows a running map without a reload: the bar and the items' page move as items finish", async () => {
    const id = uniqueId("naps");
    await start(id, { name: "naps", steps: [{ id: "thumbs", map: { items: [1, 2, 3, 4], maxConcurrency: 1, step: { sleep: { durationMs: 1_200 } } } }] });
    const page = await openWorkflow(id);
    const progress = page.getByTestId("map-progress-thumbs");
    await progress.waitFor();
    expect(Number(await progress.getAttribute("data-succeeded"))).toBeLessThan(4);
    expect(await page.locator('[data-testid="map-items-thumbs"] tr[data-status="running"]').count()).toBeLessThanOrEqual(1);
    // One line for the map's open item, not one per item.
    await expect.poll(() => page.getByTestId("diagnosis").textContent()).toContain("Map thumbs: 1 item open (1 sleeping); its panel lists them.");
    expect(await page.getByTestId("diagnosis").textContent()).not.toContain("Sleeping in thumbs#");

    await workflowShows(page, "completed");
    await expect.poll(() => progress.getAttribute("data-succeeded"), { timeout: SETTLE_MS }).toBe("4");
    await expect.poll(() => page.locator('[data-testid="map-items-thumbs"] tr[data-status="succeeded"]').count()).toBe(4);
  });
});

/** Adds fields to the view GET /v1/workflows/{id} answers, as the child workflow kind's view will carry them. */
async function viewWith(page: Page, id: string, change: (view: any) => any): Promise<void> {
  await page.context().route(
    (url) => url.pathname === `/v1/workflows/${encodeURIComponent(id)}`,
    async (route: Route) => {
      const response = await route.fetch();
      await route.fulfill({ response, json: change(await response.json()) });
    },
  );
}

describe("links between a parent workflow and its child", () => {
  it("links a parent's workflow step to its child's page, and the child back to its parent", async () => {
    const parent = uniqueId("parent");
    const child = `${parent}:ship`;
    const oneStep = (name: string) => ({ name, steps: [{ id: "ship", action: { type: "http", url: `${REMOTE_URL}/ship` } }] });
    await Promise.all([start(parent, oneStep("parent")), start(child, oneStep("shipping"))]);
    const page = await openWorkflow(parent);
    // The child kind is not served yet: the views are given its fields on their way to the page.
    await viewWith(page, parent, (view) => ({ ...view, steps: view.steps.map((step: object) => ({ ...step, kind: "workflow", child: { id: child, status: "completed" } })) }));
    await viewWith(page, child, (view) => ({ ...view, parent: { id: parent, stepId: "ship" } }));
    await page.reload();

    const link = page.getByTestId("child-of-ship");
    await expect.poll(() => link.textContent()).toMatch(new RegExp(`ship\\s*started ${child}\\s*completed`));
    await expect.poll(() => page.getByTestId("graph-node-ship").textContent()).toContain("· workflow");
    await link.getByRole("link", { name: child }).click();
    await expect.poll(() => page.getByTestId("workflow-parent").textContent()).toMatch(new RegExp(`Parent${parent}\\s*step ship`));
    await page.getByTestId("workflow-parent").getByRole("link", { name: parent }).click();
    await page.getByTestId("child-of-ship").waitFor();
  });
});

describe("folding a map's item events", () => {
  const event = (seq: number, type: string, stepId?: string, data?: unknown) => ({ seq, at: seq, type, stepId, data });

  it("keeps the map's own events and counts its items by their latest event", () => {
    const events = [
      event(1, "workflow_started"),
      event(2, "map_started", "thumbs", { total: 4, maxConcurrency: 2 }),
      event(3, "step_scheduled", "thumbs#0"),
      event(4, "step_succeeded", "thumbs#0"),
      event(5, "step_failed", "thumbs#1", { final: false }),
      event(6, "step_retry_scheduled", "thumbs#1"),
      event(7, "step_failed", "thumbs#1", { final: true }),
      event(8, "step_started", "thumbs#2"),
      event(9, "step_succeeded", "thumbs"),
    ];
    const folded = foldItemEvents(events);
    expect(folded.events.map((kept: { seq: number }) => kept.seq)).toEqual([1, 2, 9]);
    expect(folded.maps).toEqual([{ stepId: "thumbs", total: 4, events: 6, counts: { succeeded: 1, failed: 1, running: 1, pending: 1 } }]);
    expect(folded.maps.map(foldWords)).toEqual(["thumbs: 4 items — 1 succeeded, 1 failed, 1 running, 1 pending"]);
  });

  it("counts a thousand items with a space between the thousands, and folds nothing without a map", () => {
    const many = Array.from({ length: 1000 }, (_, i) => event(i + 2, i < 998 ? "step_succeeded" : "step_failed", `thumbs#${i}`, { final: true }));
    expect(foldItemEvents([event(1, "map_started", "thumbs", { total: 1000 }), ...many]).maps.map(foldWords)).toEqual(["thumbs: 1 000 items — 998 succeeded, 2 failed"]);
    expect(foldItemEvents([event(1, "workflow_started")]).maps).toEqual([]);
  });
});
