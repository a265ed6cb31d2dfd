// Every page of the dashboard (support/dashboard-pages.ts) through axe-core: no violation of a serious or critical
// impact. A failure names each violation's rule, impact and the elements it was found on.
import { describe, expect, it } from "vitest";
import { blockingViolations, describeViolations } from "./support/accessibility";
import { DASHBOARD_PAGES, openDashboardPage } from "./support/dashboard-pages";

describe("accessibility: no serious or critical axe-core violation", () => {
  it.each(DASHBOARD_PAGES.map((entry) => [entry.name, entry] as const))("on the %s page", async (_name, entry) => {
    const page = await openDashboardPage(entry);
    expect(describeViolations(await blockingViolations(page))).toBe("");
  });
});
