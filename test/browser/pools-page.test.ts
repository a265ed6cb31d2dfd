import type { Page, Route } from "playwright-core";
import { describe, expect, it } from "vitest";
import { BASE_URL, REMOTE_URL, openDashboard, saveScreenshot } from "./support/harness";
import { start, uniqueId } from "./support/workflows";

/** The page asks again every 2 s: a changed answer shows within a few refreshes. */
const SEEN_WITHIN = { timeout: 10_000, interval: 250 };

interface Pool {
  name: string;
  pending: number;
  oldestPendingAgeMs?: number;
  running: number;
  workers: { id: string; lastPollAt: number }[];
}

/**
 * Answers GET /v1/pools from the browser's side with `answer()`, asked afresh at each request, so a test
 * sets the states a pool goes through (a worker polling, then gone) without running machines of its own.
 */
async function answerPools(page: Page, answer: () => Pool[]): Promise<void> {
  await page.route("**/v1/pools", (route: Route) => route.fulfill({ json: { pools: answer() } }));
}

async function openPools(answer: () => Pool[]): Promise<Page> {
  const { page } = await openDashboard();
  await answerPools(page, answer);
  await page.getByRole("link", { name: "Pools" }).click();
  await page.getByRole("heading", { name: "Pools" }).waitFor();
  return page;
}

const row = (page: Page, pool: string) => page.locator(`[data-testid="pool-list"] tr[data-pool="${pool}"]`);

describe("the pools page", () => {
  it("lists each pool's queue and its workers with their last poll, and keeps them current", async () => {
    let pools: () => Pool[] = () => [
      { name: "gpu", pending: 12, oldestPendingAgeMs: 5_400, running: 3, workers: [{ id: "w-1", lastPollAt: Date.now() - 12_000 }, { id: "w-2", lastPollAt: Date.now() - 2_000 }] },
      { name: "cpu", pending: 0, running: 1, workers: [{ id: "w-3", lastPollAt: Date.now() - 1_000 }] },
    ];
    const page = await openPools(() => pools());
    const gpu = row(page, "gpu");
    await gpu.waitFor();
    expect(page.url()).toContain("#/pools");
    expect(await gpu.getByTestId("pool-pending").textContent()).toBe("12");
    expect(await gpu.getByTestId("pool-oldest").textContent()).toBe("5.4 s");
    expect(await gpu.getByTestId("pool-running").textContent()).toBe("3");
    expect(await gpu.getByTestId("worker-count").textContent()).toBe("2 workers");
    expect(await gpu.locator('[data-worker="w-1"]').textContent()).toBe("w-1 last poll 12 s ago");
    expect(await row(page, "cpu").getByTestId("pool-oldest").textContent()).toBe("—");
    expect(await page.getByTestId("starved-pools").count()).toBe(0);
    expect(await page.getByTestId("live-note").textContent()).toContain("refreshing every 2 s");
    await saveScreenshot(page, "pools");

    // No reload: the page asks again on its own.
    pools = () => [{ name: "gpu", pending: 40, oldestPendingAgeMs: 180_000, running: 0, workers: [{ id: "w-2", lastPollAt: Date.now() - 20_000 }] }];
    await expect.poll(() => gpu.getByTestId("pool-oldest").textContent(), SEEN_WITHIN).toBe("3 min");
    expect(await gpu.getByTestId("worker-count").textContent()).toBe("1 worker");
    expect(await row(page, "cpu").count()).toBe(0);
  });

  it("warns about a pool whose tasks wait while no worker polls it, and says how to start one", async () => {
    const page = await openPools(() => [
      { name: "gpu", pending: 4, oldestPendingAgeMs: 400_000, running: 0, workers: [] },
      { name: "idle", pending: 0, running: 0, workers: [] },
    ]);
    const warning = row(page, "gpu").getByTestId("pool-warning");
    await warning.waitFor();
    expect(await row(page, "gpu").getAttribute("class")).toContain("starved");
    expect(await warning.textContent()).toContain("its 4 pending tasks wait");
    expect(await warning.locator("code").textContent()).toBe("shepherd worker --pool gpu -- <command>");
    expect(await page.getByRole("alert").textContent()).toMatch(/Pool gpu has pending tasks and no worker seen in the last 5 min/);
    // A pool with nothing to do needs no worker: no warning.
    expect(await row(page, "idle").getByTestId("pool-warning").count()).toBe(0);
    expect(await row(page, "idle").textContent()).toContain("none in the last 5 min");
    await saveScreenshot(page, "pools-starved");
  });

  it("explains how to start a worker when there is no pool yet", async () => {
    const page = await openPools(() => []);
    const empty = page.getByRole("status");
    await empty.waitFor();
    expect(await empty.textContent()).toContain("No pools yet");
    expect(await empty.textContent()).toContain("shepherd worker --pool NAME -- <command>");
    expect(await page.getByTestId("pool-list").count()).toBe(0);
  });
});

describe("a worker step on the workflow page", () => {
  /**
   * The service's own answer with one blocker turned into a wait for a worker of pool `gpu`: the workflow, its
   * graph and its history stay real, only what the step waits for is set.
   */
  async function waitForWorkerOf(page: Page, id: string, stepId: string): Promise<void> {
    await page.route(`**/v1/workflows/${id}/diagnosis`, async (route: Route) => {
      const diagnosis = await (await route.fetch()).json();
      const blockedOn = diagnosis.blockedOn.map((blocked: { stepId?: string }) =>
        blocked.stepId === stepId ? { ...blocked, reason: "waiting_for_worker", pool: "gpu", detail: "waiting for a worker of pool gpu" } : blocked,
      );
      await route.fulfill({ json: { ...diagnosis, blockedOn } });
    });
  }

  it("names the step's pool in its node and says whether a worker polls it", async () => {
    const id = uniqueId("train");
    // An action step that stays open: /render accepts the job (202) and never finishes it.
    await start(id, { name: "train", steps: [{ id: "train", action: { type: "http", url: `${REMOTE_URL}/render` } }] });
    let workers: Pool["workers"] = [];
    const { page } = await openDashboard();
    await waitForWorkerOf(page, id, "train");
    await answerPools(page, () => [{ name: "gpu", pending: 1, oldestPendingAgeMs: 1_000, running: 0, workers }]);
    await page.goto(new URL(`/#/workflows/${id}`, BASE_URL).toString());

    const diagnosis = page.getByTestId("diagnosis");
    await expect.poll(() => diagnosis.textContent(), SEEN_WITHIN).toMatch(/train: waiting for a worker of pool gpu \(none polled for 5 min\) since \d\d:\d\d:\d\d\./);
    expect(await diagnosis.getByRole("link", { name: "gpu" }).getAttribute("href")).toBe("#/pools");
    expect(await page.getByTestId("graph-node-train").locator(".node-status").textContent()).toContain("pool gpu");

    workers = [{ id: "w-1", lastPollAt: Date.now() - 3_000 }];
    await expect.poll(() => diagnosis.textContent(), SEEN_WITHIN).toMatch(/waiting for a worker of pool gpu \(1 worker, last poll \d+ s ago\)/);
  });
});
