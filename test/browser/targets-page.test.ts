import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Page, Route } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { api, openDashboard, saveScreenshot } from "./support/harness";
import { expectFitsAPhone } from "./support/phone";
import { SETTLE_MS, start, uniqueId } from "./support/workflows";

/**
 * Two hosts of this file's own, so no other test's calls share their breakers: one answers 503 to everything (its
 * breaker opens), the other 503 once and then 200 (its breaker saw a failure and stays closed).
 */
let failing: Server;
let flaky: Server;
const started: string[] = [];

async function listen(answer: (count: number) => number): Promise<Server> {
  let count = 0;
  const server = createServer((request, response) => {
    request.resume();
    count += 1;
    response.writeHead(answer(count), { "Content-Type": "application/json" }).end("{}");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return server;
}

const hostOf = (server: Server) => `127.0.0.1:${(server.address() as AddressInfo).port}`;

beforeAll(async () => {
  failing = await listen(() => 503);
  flaky = await listen((count) => (count === 1 ? 503 : 200));
});

afterAll(async () => {
  // The workflow parked on the open breaker would wait minutes for it: it goes with the file.
  for (const id of started) await api("POST", `/v1/workflows/${id}/cancel`, { reason: "end of the targets page test" }).catch(() => undefined);
  await Promise.all([failing, flaky].map((server) => new Promise((resolve) => server.close(resolve))));
});

/** One call to `host`, retried quickly; its breaker opens after two failures in a row and stays open five minutes. */
async function callAndRetry(host: string): Promise<void> {
  const id = uniqueId("breaker");
  started.push(id);
  await start(id, {
    name: "breaker",
    steps: [
      {
        id: "call",
        action: { type: "http", url: `http://${host}/pay` },
        retry: { maxAttempts: 10, initialIntervalMs: 100, maxIntervalMs: 200 },
        breaker: { failures: 2, openMs: 300_000 },
      },
    ],
  });
}

/** Waits until the service lists the host's breaker in `state` (the listing follows the breaker's object). */
async function listed(host: string, state: string): Promise<void> {
  await expect
    .poll(async () => (await api<{ targets: { host: string; state: string }[] }>("GET", "/v1/targets")).targets.find((target) => target.host === host)?.state, {
      timeout: SETTLE_MS,
      interval: 250,
    })
    .toBe(state);
}

const row = (page: Page, host: string) => page.locator(`[data-testid="target-list"] tr[data-host="${host}"]`);

describe("the targets page, with the service's breakers", () => {
  it("shows each host's breaker: an open one marked and named above the table, with its failures, open-until and parked attempts", async () => {
    const [open, closed] = [hostOf(failing), hostOf(flaky)];
    await callAndRetry(open);
    await callAndRetry(closed);
    await listed(open, "open");
    await listed(closed, "closed");

    const { page } = await openDashboard();
    await page.locator("header.top nav").getByRole("link", { name: "Targets", exact: true }).click();
    await page.getByRole("heading", { name: "Targets", level: 1 }).waitFor();
    const openRow = row(page, open);
    await openRow.waitFor();
    expect(page.url()).toContain("#/targets");
    expect(await openRow.getAttribute("data-state")).toBe("open");
    expect(await openRow.getByTestId("target-state").textContent()).toBe("open");
    expect(await openRow.getByTestId("target-state").locator(".status").count()).toBe(1);
    expect(await openRow.getByTestId("target-failures").textContent()).toBe("2");
    expect(await openRow.getByTestId("target-open-until").textContent()).toMatch(/^\d\d:\d\d:\d\d\s*in [45] min$/);
    // The retry that came after the breaker opened waits on it.
    await expect.poll(() => openRow.getByTestId("target-parked").textContent(), { timeout: SETTLE_MS }).toBe("1");
    expect(await page.getByTestId("open-breakers").textContent()).toContain(`${open} (open)`);
    expect(await page.getByTestId("open-breakers").textContent()).not.toContain(closed);

    const closedRow = row(page, closed);
    expect(await closedRow.getByTestId("target-state").textContent()).toBe("closed");
    // A closed breaker reads quietly: no badge, and after every breaker that is not closed.
    expect(await closedRow.getByTestId("target-state").locator(".status").count()).toBe(0);
    const order = await page.locator('[data-testid="target-list"] tbody tr').evaluateAll((rows) => rows.map((tr) => tr.getAttribute("data-state")));
    expect(order.indexOf("open")).toBeLessThan(order.lastIndexOf("closed"));
    expect(order.slice(order.indexOf("closed"))).not.toContain("open");
    await saveScreenshot(page, "targets");

    await expectFitsAPhone(page);
    await saveScreenshot(page, "targets-phone");
  });
});

describe("the targets page, with answers set in the browser", () => {
  async function openTargets(answer: unknown): Promise<Page> {
    const { page } = await openDashboard();
    await page.route("**/v1/targets*", (route: Route) => route.fulfill({ json: answer }));
    await page.locator("header.top nav").getByRole("link", { name: "Targets", exact: true }).click();
    await page.getByRole("heading", { name: "Targets", level: 1 }).waitFor();
    return page;
  }

  it("says since when a half-open breaker probes", async () => {
    const since = Date.now() - 4_000;
    const page = await openTargets({ targets: [{ host: "pay.example.com", state: "half_open", failures: 6, openUntil: since, parked: 3 }] });
    const probing = row(page, "pay.example.com");
    await probing.waitFor();
    expect(await probing.getByTestId("target-state").textContent()).toBe("half-open");
    expect(await probing.getByTestId("target-open-until").textContent()).toMatch(/^probing since \d\d:\d\d:\d\d$/);
    expect(await page.getByTestId("open-breakers").textContent()).toContain("pay.example.com (half-open)");
  });

  it("explains when a host is listed when none is", async () => {
    const page = await openTargets({ targets: [] });
    const empty = page.getByRole("status");
    await empty.waitFor();
    expect(await empty.textContent()).toContain("No target host has failed lately");
    expect(await page.getByTestId("target-list").count()).toBe(0);
  });
});
