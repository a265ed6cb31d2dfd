import type { Page, Route } from "playwright-core";
import { describe, expect, it } from "vitest";
import { api, openDashboard, saveScreenshot } from "./support/harness";
import { openWorkflow, start, uniqueId, workflowShows } from "./support/workflows";

/** The page asks again every 2 s: a changed answer shows within a few refreshes. */
const SEEN_WITHIN = { timeout: 10_000, interval: 250 };

interface Pool {
  name: string;
  pending: number;
  oldestPendingAgeMs: number | null;
  running: number;
  workers: { id: string; lastPollAt: number }[];
}

/**
 * Answers GET /v1/pools from the browser's side with `answer()`, asked afresh at each request: exact ages and
 * last polls, and a tenant with no pool at all, which a service shared by the whole run cannot promise.
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

describe("the pools page, with answers set in the browser", () => {
  it("lists each pool's queue and its workers with their last poll, and keeps them current", async () => {
    let pools: () => Pool[] = () => [
      { name: "gpu", pending: 12, oldestPendingAgeMs: 5_400, running: 3, workers: [{ id: "w-1", lastPollAt: Date.now() - 12_000 }, { id: "w-2", lastPollAt: Date.now() - 2_000 }] },
      { name: "cpu", pending: 0, oldestPendingAgeMs: null, running: 1, workers: [{ id: "w-3", lastPollAt: Date.now() - 1_000 }] },
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

  it("explains how to start a worker when there is no pool yet", async () => {
    const page = await openPools(() => []);
    const empty = page.getByRole("status");
    await empty.waitFor();
    expect(await empty.textContent()).toContain("No pools yet");
    expect(await empty.textContent()).toContain("shepherd worker --pool NAME -- <command>");
    expect(await page.getByTestId("pool-list").count()).toBe(0);
  });
});

/** The service's own pools from here on: a workflow's worker step waits in one, and a worker polls it once. */
const workerStep = (id: string, pool: string) => ({ id, dependsOn: [], action: { type: "worker", pool, input: { step: id } } });

interface WorkerTask {
  token: string;
  stepId: string;
}

/** One poll of a worker, as `shepherd worker` makes it, that does not wait: what the pool had for it. */
async function pollOnce(pool: string, workerId: string): Promise<WorkerTask[]> {
  return (await api("POST", `/v1/pools/${pool}/tasks/poll`, { workerId, waitMs: 0 })).tasks;
}

async function complete(task: WorkerTask): Promise<void> {
  await api("POST", `/v1/tasks/${task.token}/complete`, { output: { done: task.stepId } });
}

describe("the pools page, with the service's pools", () => {
  it("flags a pool whose task waits with no worker, then lists the worker that polled it and the task it runs", async () => {
    const pool = uniqueId("gpu");
    const id = uniqueId("render");
    await start(id, { name: "render", steps: [workerStep("frame", pool)] });
    const { page } = await openDashboard({ path: "/#/pools" });
    const mine = row(page, pool);
    await mine.getByTestId("pool-warning").waitFor(SEEN_WITHIN);
    expect(await mine.getByTestId("pool-pending").textContent()).toBe("1");
    expect(await mine.getByTestId("pool-warning").locator("code").textContent()).toBe(`shepherd worker --pool ${pool} -- <command>`);
    expect(await page.getByTestId("starved-pools").textContent()).toContain(pool);
    await saveScreenshot(page, "pools-starved");

    const [task] = await pollOnce(pool, "w-1");
    expect(task?.stepId).toBe("frame");
    await expect.poll(() => mine.getByTestId("pool-running").textContent(), SEEN_WITHIN).toBe("1");
    expect(await mine.getByTestId("pool-pending").textContent()).toBe("0");
    expect(await mine.getByTestId("pool-warning").count()).toBe(0);
    expect(await mine.locator('[data-worker="w-1"]').textContent()).toMatch(/^w-1 last poll (now|\d+ s ago)$/);

    await complete(task!);
    await expect.poll(() => mine.getByTestId("pool-running").textContent(), SEEN_WITHIN).toBe("0");
  });
});

describe("a worker step on the workflow page", () => {
  it("names its pool in the graph and says whether a worker polls the pool it waits in", async () => {
    const pool = uniqueId("gpu");
    const id = uniqueId("train");
    // Two steps side by side in one pool: a poll takes one, and the other still waits while a worker is seen.
    await start(id, { name: "train", steps: [workerStep("left", pool), workerStep("right", pool)] });
    const page = await openWorkflow(id);
    const diagnosis = page.getByTestId("diagnosis");
    const none = new RegExp(`left: waiting for a worker of pool ${pool} \\(none polled for 5 min\\) since \\d\\d:\\d\\d:\\d\\d\\.`);
    await expect.poll(() => diagnosis.textContent(), SEEN_WITHIN).toMatch(none);
    expect(await diagnosis.getByRole("link", { name: pool }).first().getAttribute("href")).toBe("#/pools");
    // The node's status wraps to a second line, so the pool's name shows whole; its title says it too.
    expect((await page.getByTestId("graph-node-left").locator(".node-status").allTextContents()).join(" ")).toBe(`scheduled · pool ${pool}`);
    expect(await page.getByTestId("graph-node-left").locator("title").textContent()).toContain(`(pool ${pool})`);
    expect(await page.locator('[data-testid="attempts-table"] tr[data-step="left"]').textContent()).toContain(`waiting for a worker of pool ${pool}`);
    await saveScreenshot(page, "workflow-worker-step");

    const [first] = await pollOnce(pool, "w-1");
    const seen = new RegExp(`waiting for a worker of pool ${pool} \\(1 worker, last poll (now|\\d+ s ago)\\)`);
    await expect.poll(() => diagnosis.textContent(), SEEN_WITHIN).toMatch(seen);

    await complete(first!);
    const [second] = await pollOnce(pool, "w-1");
    await complete(second!);
    await workflowShows(page, "completed");
  });
});
