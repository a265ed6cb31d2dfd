import type { Page, Route } from "playwright-core";
import { describe, expect, it } from "vitest";
import { openDashboard, saveScreenshot } from "./support/harness";

const MINUTE = 60_000;
const SEEN_WITHIN = { timeout: 10_000, interval: 250 };

type Point = Record<string, unknown> & { at: number };

/** A point of GET /v1/metrics/series with nothing in it. */
function emptyPoint(at: number): Point {
  return {
    at,
    started: 0,
    completed: 0,
    failed: 0,
    compensated: 0,
    cancelled: 0,
    terminated: 0,
    attempts: 0,
    retries: 0,
    timeouts: { heartbeat: 0, start_to_close: 0, schedule_to_start: 0, stalled: 0 },
    compensations: 0,
    escalations: 0,
    detectionLatenessMs: { count: 0, p50: null, p99: null, max: null },
    queueLagMs: null,
  };
}

/** What some points add up to, as the service's `total` (the lateness and lag given, not summed). */
function totalOf(points: Point[], extra: Partial<Point> = {}): Omit<Point, "at"> {
  const sum = (field: string) => points.reduce((total, point) => total + (point[field] as number), 0);
  const { at: _at, ...zeros } = emptyPoint(0);
  const counts = Object.fromEntries(["started", "completed", "failed", "compensated", "cancelled", "terminated", "attempts", "retries", "compensations", "escalations"].map((field) => [field, sum(field)]));
  return { ...zeros, ...counts, ...extra };
}

/**
 * Answers GET /v1/metrics/series from the browser's side, for whatever range the page asks: every step present,
 * `fill(i, point)` setting what step i holds. The ranges asked for are kept, in order.
 */
async function answerSeries(page: Page, fill: (i: number, point: Point) => void, extra: Partial<Point> = {}): Promise<URLSearchParams[]> {
  const asked: URLSearchParams[] = [];
  await page.route("**/v1/metrics/series*", (route: Route) => {
    const params = new URL(route.request().url()).searchParams;
    asked.push(params);
    const [from, to, stepMs] = ["from", "to", "stepMs"].map((name) => Number(params.get(name)));
    const series = Array.from({ length: Math.ceil((to! - from!) / stepMs!) }, (_, i) => {
      const point = emptyPoint(from! + i * stepMs!);
      fill(i, point);
      return point;
    });
    return route.fulfill({ json: { from, to: from! + series.length * stepMs!, stepMs, series, total: totalOf(series, extra) } });
  });
  return asked;
}

/** The data-value of each bar of `series` in the chart, left to right. */
async function barValues(page: Page, chart: string, series: string): Promise<number[]> {
  return page.getByTestId(chart).locator(`rect.bar.s-${series}`).evaluateAll((bars) => bars.map((bar) => Number(bar.getAttribute("data-value"))));
}

/** Opens the dashboard, answers the series as given, and goes to the metrics page, noting every request for the workflow list. */
async function openMetrics(fill: (i: number, point: Point) => void, extra: Partial<Point> = {}) {
  // From a page that never reads the workflow list (the list, the default page, refreshes itself meanwhile).
  const { page } = await openDashboard({ path: "/#/pools" });
  const asked = await answerSeries(page, fill, extra);
  const listed: string[] = [];
  page.on("request", (request) => {
    if (new URL(request.url()).pathname.startsWith("/v1/workflows")) listed.push(request.url());
  });
  await page.getByRole("link", { name: "Metrics" }).click();
  await page.getByTestId("chart-outcomes").waitFor(SEEN_WITHIN);
  return { page, asked, listed };
}

describe("the metrics page, drawn from the service's series", () => {
  it("draws thousands of workflows' ends, attempts, lateness and the queues' lag from the series alone, never paging the workflow list", async () => {
    const { page, asked, listed } = await openMetrics(
      (i, point) => {
        if (i % 3 === 0) Object.assign(point, { started: 900, completed: 800, failed: 70, attempts: 2_400, retries: 300 });
        if (i === 4) Object.assign(point, { cancelled: 12, terminated: 3, compensated: 40 });
        point.queueLagMs = i === 6 ? 4_500 : 0;
      },
      { detectionLatenessMs: { count: 9_000, p50: 25, p99: 2_500, max: 7_300 }, timeouts: { heartbeat: 5, start_to_close: 2, schedule_to_start: 0, stalled: 1 } },
    );

    // The default window, an hour in 5-minute steps, local clock boundaries.
    const range = asked[0]!;
    expect(Number(range.get("stepMs"))).toBe(5 * MINUTE);
    expect(Number(range.get("to")) - Number(range.get("from"))).toBe(60 * MINUTE);
    expect(Number(range.get("to")) % MINUTE).toBe(0);
    // 4 steps of 800 completed: 3 200 workflows' ends, more than the workflow list could ever be paged for.
    expect(await barValues(page, "chart-outcomes", "completed")).toEqual([800, 800, 800, 800]);
    expect(await barValues(page, "chart-outcomes", "failed")).toEqual([70, 70, 70, 70]);
    expect(await barValues(page, "chart-outcomes", "cancelled")).toEqual([12]);
    expect(await page.getByTestId("outcomes-caption").textContent()).toContain("3535 ended, 3600 started");
    expect(Number(await page.getByTestId("chart-retries").locator('rect[data-series="attempts"]').getAttribute("data-value"))).toBe(9_600);
    expect(Number(await page.getByTestId("chart-retries").locator('rect[data-series="retries"]').getAttribute("data-value"))).toBe(1_200);
    expect(await page.getByTestId("retries-panel").locator(".caption").textContent()).toContain("13 % of attempts were retries");
    expect(await page.getByTestId("chart-lateness").locator("rect.bar").evaluateAll((bars) => bars.map((bar) => Number(bar.getAttribute("data-value"))))).toEqual([25, 2_500, 7_300]);
    expect(await barValues(page, "chart-queue-lag", "queue-lag")).toEqual([4_500]);
    expect(await page.getByTestId("chart-queue-lag").locator("rect.bar title").textContent()).toContain("4.5 s worst lag");
    await saveScreenshot(page, "metrics-series");

    // Another window asks for its own steps: a day in hours.
    await page.getByRole("link", { name: "24 hours" }).click();
    await expect.poll(() => asked.at(-1)?.get("stepMs"), SEEN_WITHIN).toBe(String(60 * MINUTE));
    expect(Number(asked.at(-1)!.get("to")) - Number(asked.at(-1)!.get("from"))).toBe(24 * 60 * MINUTE);
    await expect.poll(() => barValues(page, "chart-outcomes", "completed"), SEEN_WITHIN).toEqual(Array(8).fill(800));
    expect(listed).toEqual([]);
  });

  it("says when no deadline passed and the queues sampled no lag in the window", async () => {
    const { page } = await openMetrics(() => undefined);

    expect(await page.getByTestId("chart-outcomes").locator("rect.bar").count()).toBe(0);
    expect(await page.getByTestId("lateness-panel").getByRole("status").textContent()).toBe("No deadline passed in the last 1 hour, so the supervisor was not late on any.");
    expect(await page.getByTestId("queue-lag-panel").getByRole("status").textContent()).toBe("The task queues delivered nothing in the last 1 hour, so no lag was sampled.");
    expect(await page.getByTestId("outcomes-caption").textContent()).toContain("0 ended, 0 started");
  });
});
