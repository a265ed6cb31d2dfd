import type { Locator, Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { api, openDashboard, REMOTE_URL, saveScreenshot } from "./support/harness";

/** This file's names: the service lives for the whole run, so other files' workflows are listed too. */
const RUN = Date.now().toString(36);
/** A real service: a workflow ends within seconds, and the page shows it within its next refresh. */
const SEEN_WITHIN = { timeout: 20_000, interval: 250 };

const ship = { type: "http", url: `${REMOTE_URL}/ship` };

function definition(name: string, step: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  return { name, ...extra, steps: [{ id: "only", ...step }] };
}

async function start(id: string, def: ReturnType<typeof definition>): Promise<void> {
  await api("POST", "/v1/workflows", { id, definition: def });
}

async function statusOf(id: string): Promise<string> {
  return (await api("GET", `/v1/workflows/${encodeURIComponent(id)}`)).status;
}

function row(page: Page, id: string): Locator {
  return page.locator(`[data-testid="workflow-list"] tr[data-workflow-id="${id}"]`);
}

/** The ids the list shows, top to bottom, once the page it shows has loaded (not while it is busy). */
async function listedIds(page: Page): Promise<string[]> {
  await page.locator('[data-testid="workflow-list"][aria-busy="false"]').waitFor();
  return page.locator('[data-testid="workflow-list"] tbody tr').evaluateAll((rows) => rows.map((tr) => tr.getAttribute("data-workflow-id") ?? ""));
}

async function confirmAction(scope: Locator, action: string): Promise<void> {
  await scope.locator(`[data-action="${action}"]`).click();
  await scope.locator(`dialog[data-confirm="${action}"]`).getByRole("button", { name: /Confirm|Delete/ }).click();
  await scope.locator(`dialog[data-confirm="${action}"]`).waitFor({ state: "hidden" });
}

describe("the workflows list", () => {
  const name = `list-${RUN}`;
  const ids = { done: `${name}-done`, failed: `${name}-failed`, waiting: `${name}-waiting` };

  it("shows the seeded workflows with their statuses, and keeps them current", async () => {
    await start(ids.done, definition(name, { action: ship }));
    await start(ids.failed, definition(name, { action: { type: "http", url: `${REMOTE_URL}/decline` } }, { onFailure: "fail" }));
    await start(ids.waiting, definition(name, { waitForEvent: { event: "approved", timeoutMs: 3_600_000 } }));
    const { page } = await openDashboard({ path: "/#/workflows" });

    await expect.poll(() => row(page, ids.done).getAttribute("data-status"), SEEN_WITHIN).toBe("completed");
    await expect.poll(() => row(page, ids.failed).getAttribute("data-status"), SEEN_WITHIN).toBe("failed");
    expect(await row(page, ids.waiting).getAttribute("data-status")).toBe("running");
    expect(await row(page, ids.done).locator(".status.completed").textContent()).toBe("completed");
    expect(await row(page, ids.failed).locator(".status.failed").textContent()).toBe("failed");
    expect(await row(page, ids.done).getByRole("link", { name: ids.done }).getAttribute("href")).toBe(`#/workflows/${ids.done}`);
    expect(await page.getByTestId("live-note").textContent()).toContain("refreshing every 2 s");
    await saveScreenshot(page, "workflows");

    // No reload: the page asks again while a workflow on it is open.
    await api("POST", `/v1/workflows/${ids.waiting}/events`, { event: "approved" });
    await expect.poll(() => row(page, ids.waiting).getAttribute("data-status"), SEEN_WITHIN).toBe("completed");
  });

  it("narrows to one status from the filter, kept in the URL through a reload and undone by Back", async () => {
    const { page } = await openDashboard({ path: "/#/workflows" });
    await row(page, ids.done).waitFor();

    await page.locator('[data-status-filter="failed"]').click();
    await expect.poll(() => listedIds(page), SEEN_WITHIN).not.toContain(ids.done);
    expect(page.url()).toContain("status=failed");
    expect(await listedIds(page)).toContain(ids.failed);
    const statuses = await page.locator('[data-testid="workflow-list"] tbody tr').evaluateAll((rows) => rows.map((tr) => tr.getAttribute("data-status")));
    expect(new Set(statuses)).toEqual(new Set(["failed"]));

    await page.reload();
    await row(page, ids.failed).waitFor();
    expect(await page.locator('[data-status-filter="failed"]').getAttribute("aria-current")).toBe("page");
    expect(await listedIds(page)).not.toContain(ids.done);

    await page.goBack();
    await row(page, ids.done).waitFor();
    expect(page.url()).not.toContain("status=");
  });

  it("shows a scheduled workflow with when it starts, and narrows to the scheduled ones", async () => {
    // A definition name of its own: the searches below count this file's workflows of `name`.
    const later = `scheduled-${RUN}`;
    await api("POST", "/v1/workflows", { id: later, definition: definition(later, { action: ship }), startDelayMs: 3_600_000 });
    const { page } = await openDashboard({ path: "/#/workflows" });

    await expect.poll(() => row(page, later).getAttribute("data-status"), SEEN_WITHIN).toBe("scheduled");
    expect(await row(page, later).locator(".status.scheduled").textContent()).toBe("scheduled");
    expect(await row(page, later).getByTestId("starts-at").textContent()).toMatch(/^starts \d\d:\d\d:\d\d$/);

    await page.locator('[data-status-filter="scheduled"]').click();
    await expect.poll(() => listedIds(page), SEEN_WITHIN).not.toContain(ids.done);
    expect(page.url()).toContain("status=scheduled");
    expect(await listedIds(page)).toContain(later);
    await api("POST", `/v1/workflows/${later}/cancel`);
  });

  it("finds a workflow by its exact id, its workflows by their definition name, and says what it cannot search", async () => {
    const { page } = await openDashboard({ path: "/#/workflows" });
    const search = page.getByRole("searchbox", { name: "Search by workflow id or definition name" });

    await search.fill(ids.waiting);
    await page.getByRole("button", { name: "Search" }).click();
    await expect.poll(() => listedIds(page), SEEN_WITHIN).toEqual([ids.waiting]);
    expect(await row(page, ids.waiting).locator(".tag").textContent()).toBe("id match");

    await search.fill(name);
    await page.getByRole("button", { name: "Search" }).click();
    await expect.poll(async () => (await listedIds(page)).sort(), SEEN_WITHIN).toEqual(Object.values(ids).sort());

    await search.fill("not an id");
    await page.getByRole("button", { name: "Search" }).click();
    await expect.poll(() => page.getByRole("status").textContent(), SEEN_WITHIN).toContain("cannot be a workflow id or a definition name");

    await search.fill(`nothing-called-${RUN}`);
    await page.getByRole("button", { name: "Search" }).click();
    await expect.poll(() => page.getByRole("status").textContent(), SEEN_WITHIN).toContain(`No workflows with the id or definition name “nothing-called-${RUN}”`);
  });

  it("pages through the list with the API's cursor, forward and back, and a reload keeps the page", async () => {
    const pagedName = `paged-${RUN}`;
    const pagedIds = [1, 2, 3, 4, 5].map((n) => `${pagedName}-${n}`);
    for (const id of pagedIds) await start(id, definition(pagedName, { action: ship }));
    const { page } = await openDashboard({ path: `/#/workflows?q=${pagedName}&limit=2` });

    const seen: string[][] = [];
    for (const pageNumber of [1, 2, 3]) {
      const previous = seen.at(-1) ?? [];
      await expect.poll(async () => (await listedIds(page)).filter((id) => !previous.includes(id)).length, SEEN_WITHIN).toBe(pageNumber === 3 ? 1 : 2);
      expect(await page.getByTestId("page-number").textContent()).toBe(`Page ${pageNumber}`);
      seen.push(await listedIds(page));
      if (pageNumber < 3) await page.getByRole("link", { name: "Next →" }).click();
    }
    expect(seen.flat().sort()).toEqual([...pagedIds].sort());
    expect(await page.getByRole("link", { name: "Next →" }).count()).toBe(0);

    await page.getByRole("link", { name: "← Previous" }).click();
    await expect.poll(() => listedIds(page), SEEN_WITHIN).toEqual(seen[1]);
    await page.reload();
    await expect.poll(() => listedIds(page), SEEN_WITHIN).toEqual(seen[1]);
    expect(await page.getByTestId("page-number").textContent()).toBe("Page 2");
  });
});

describe("the workflows list triages", () => {
  const family = `triage-${RUN}`;
  const ids = { retrying: `${family}-retrying`, stuck: `${family}-stuck`, waiting: `${family}-waiting`, done: `${family}-done` };
  const summaryOf = (page: Page, id: string) => row(page, id).getByTestId("summary");

  it("says why each open workflow is worth a look: a retry after a 503, a stuck job, a wait for approval; nothing for one that ended", async () => {
    await start(ids.retrying, definition(family, { action: { type: "http", url: `${REMOTE_URL}/unavailable` }, retry: { maxAttempts: 8, initialIntervalMs: 600_000, maxIntervalMs: 600_000, jitter: 0 } }));
    // The remote's first /render job heartbeats "47 %" for ever: the progress stall ends it, and no retry is left.
    const stuck = { action: { type: "http", url: `${REMOTE_URL}/render` }, retry: { maxAttempts: 1 }, timeouts: { progressMs: 2_000 } };
    await start(ids.stuck, definition(family, stuck, { onFailure: "escalate" }));
    await start(ids.waiting, definition(family, { waitForEvent: { event: "approved", timeoutMs: 3_600_000 } }));
    await start(ids.done, definition(family, { action: ship }));
    const { page } = await openDashboard({ path: `/#/workflows?idPrefix=${family}` });

    await expect.poll(() => summaryOf(page, ids.retrying).textContent(), SEEN_WITHIN).toBe("retrying only 2/8 after 503");
    expect(await row(page, ids.retrying).getAttribute("data-status")).toBe("running");
    expect(await row(page, ids.retrying).getAttribute("data-attention")).toBe("retrying");
    expect(await row(page, ids.retrying).getByTestId("attempts").textContent()).toBe("attempt 2 of 8");
    expect(await row(page, ids.retrying).getByTestId("next-deadline").textContent()).toMatch(/^\d\d:\d\d:\d\din (9|10) min$/);
    expect(await summaryOf(page, ids.waiting).textContent()).toBe("waiting for event approved");
    expect(await row(page, ids.waiting).getAttribute("data-attention")).toBe("waiting");
    await expect.poll(() => summaryOf(page, ids.stuck).textContent(), SEEN_WITHIN).toBe("needs attention: only failed (stalled at 47 %)");
    expect(await row(page, ids.stuck).getAttribute("data-attention")).toBe("failed");

    await expect.poll(() => row(page, ids.done).getAttribute("data-status"), SEEN_WITHIN).toBe("completed");
    expect(await row(page, ids.done).getByTestId("summary").count()).toBe(0);
    expect(await row(page, ids.done).getByTestId("ended-at").textContent()).toMatch(/^\d\d:\d\d:\d\d$/);
    await saveScreenshot(page, "workflows-triage");

    // The line goes once the workflow is no longer worth a look.
    await api("POST", `/v1/workflows/${ids.waiting}/events`, { event: "approved" });
    await expect.poll(() => row(page, ids.waiting).getAttribute("data-status"), SEEN_WITHIN).toBe("completed");
    expect(await summaryOf(page, ids.waiting).count()).toBe(0);
    await api("POST", `/v1/workflows/${ids.retrying}/terminate`, { reason: "test over" });
    await api("POST", `/v1/workflows/${ids.stuck}/compensate`, { reason: "test over" });
  });

  it("narrows to the workflows whose id starts with the text typed, and back to all when cleared", async () => {
    const { page } = await openDashboard({ path: "/#/workflows" });
    await row(page, ids.done).waitFor(SEEN_WITHIN);

    await page.getByRole("searchbox", { name: "Id starts with" }).fill(`${family}-d`);
    await page.getByRole("button", { name: "Filter", exact: true }).click();
    await expect.poll(() => listedIds(page), SEEN_WITHIN).toEqual([ids.done]);
    expect(page.url()).toContain(`idPrefix=${family}-d`);

    await page.getByRole("button", { name: "Clear filters" }).click();
    await expect.poll(async () => (await listedIds(page)).length, SEEN_WITHIN).toBeGreaterThan(1);
    expect(page.url()).not.toContain("idPrefix=");
  });

  it("narrows to a created range, typed or the last hour, and says when none was created then", async () => {
    const later = new Date(Date.now() + 3_600_000).toISOString();
    const { page } = await openDashboard({ path: `/#/workflows?idPrefix=${family}&createdAfter=${later}` });

    await expect.poll(() => page.getByRole("status").textContent(), SEEN_WITHIN).toContain(`whose id starts with “${family}” created from`);
    // The browser leaves the seconds out of the input's value when they are :00.
    expect(await page.locator('input[name="createdAfter"]').inputValue()).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d)?$/);

    await page.getByRole("button", { name: "Last hour" }).click();
    await expect.poll(async () => (await listedIds(page)).sort(), SEEN_WITHIN).toEqual(Object.values(ids).sort());
    expect(page.url()).toContain("createdAfter=");
  });
});

describe("the schedules page", () => {
  const id = `nightly-${RUN}`;
  const doomed = `doomed-${RUN}`;
  const schedule = (scheduleId: string) => ({
    id: scheduleId,
    cron: "0 3 * * *",
    timezone: "Europe/Paris",
    workflow: { definition: definition(`report-${RUN}`, { action: ship }) },
  });

  it("shows a created schedule, fires it now, pauses it and deletes another, each after a confirmation", async () => {
    await api("POST", "/v1/schedules", schedule(id));
    await api("POST", "/v1/schedules", schedule(doomed));
    const { page } = await openDashboard({ path: "/#/schedules" });
    const mine = page.locator(`tr[data-schedule="${id}"]`);
    await mine.waitFor();
    expect(await mine.textContent()).toContain("0 3 * * *");
    expect(await mine.textContent()).toContain("Europe/Paris");
    expect(await mine.getByTestId("schedule-state").textContent()).toBe("active");
    expect(await mine.textContent()).toContain("No fires yet");

    await confirmAction(mine, "trigger");
    const fired = mine.locator(".fires a", { hasText: `${id}:` });
    await fired.waitFor(SEEN_WITHIN);
    const workflowId = (await fired.textContent()) ?? "";
    expect(await fired.getAttribute("href")).toBe(`#/workflows/${encodeURIComponent(workflowId)}`);
    expect(await statusOf(workflowId)).toMatch(/running|completed/);
    expect(await mine.locator(".fires .status.started").count()).toBe(1);

    await confirmAction(mine, "pause");
    await expect.poll(() => mine.getByTestId("schedule-state").textContent(), SEEN_WITHIN).toBe("paused");
    expect(await mine.locator('[data-action="resume"]').count()).toBe(1);

    await confirmAction(page.locator(`tr[data-schedule="${doomed}"]`), "delete");
    await expect.poll(() => page.locator(`tr[data-schedule="${doomed}"]`).count(), SEEN_WITHIN).toBe(0);
    await expect(api("GET", `/v1/schedules/${doomed}`)).rejects.toThrow(/404/);
    await saveScreenshot(page, "schedules");
  });
});

describe("the metrics page", () => {
  it("draws workflows by outcome over time, retries and detection lateness as SVG charts", async () => {
    const retried = `metrics-${RUN}-flaky`;
    const late = `metrics-${RUN}-late`;
    await start(retried, definition(`metrics-${RUN}`, { action: { type: "http", url: `${REMOTE_URL}/flaky` }, retry: { initialIntervalMs: 100, maxAttempts: 5 } }));
    // A wait that times out gives the supervisor a deadline to act on, and so a lateness to measure.
    await start(late, definition(`metrics-${RUN}`, { waitForEvent: { event: "never", timeoutMs: 200, onTimeout: "skip" } }));
    await expect.poll(() => statusOf(retried), SEEN_WITHIN).toBe("completed");
    await expect.poll(() => statusOf(late), SEEN_WITHIN).toBe("completed");

    const { page } = await openDashboard({ path: "/#/metrics" });
    const outcomes = page.getByTestId("chart-outcomes");
    await outcomes.waitFor(SEEN_WITHIN);
    expect(await outcomes.locator("rect.bar.s-completed").count()).toBeGreaterThan(0);
    expect(await outcomes.locator("text.tick").count()).toBeGreaterThan(2);
    expect(await page.locator('[data-testid="outcomes-panel"] .legend li').allTextContents()).toEqual(["completed", "failed", "compensated", "cancelled", "terminated"]);

    const retries = page.getByTestId("chart-retries");
    expect(Number(await retries.locator('rect[data-series="retries"]').getAttribute("data-value"))).toBeGreaterThanOrEqual(2);
    expect(Number(await retries.locator('rect[data-series="attempts"]').getAttribute("data-value"))).toBeGreaterThanOrEqual(3);

    const lateness = page.getByTestId("chart-lateness");
    expect(await lateness.locator("rect.bar").count()).toBe(3);
    expect(await lateness.locator(".marker text").textContent()).toBe("1 s promise");

    await page.getByRole("link", { name: "15 min" }).click();
    await expect.poll(() => page.url(), SEEN_WITHIN).toContain("window=15m");
    await expect.poll(() => outcomes.locator("rect.bar.s-completed").count(), SEEN_WITHIN).toBeGreaterThan(0);
    await page.getByRole("link", { name: "1 hour" }).click();
    await outcomes.locator("rect.bar").first().waitFor();
    await saveScreenshot(page, "metrics");
  });
});
