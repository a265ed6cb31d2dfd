// Every page of the dashboard (support/dashboard-pages.ts) through axe-core, on a desktop's window and on a phone's
// (where tables scroll in their own boxes and the navigation wraps): no violation of a serious or critical impact. A
// failure names each violation's rule, impact and the elements it was found on.
import { describe, expect, it } from "vitest";
import { blockingViolations, describeViolations } from "./support/accessibility";
import { DASHBOARD_PAGES, openDashboardPage } from "./support/dashboard-pages";
import { DESKTOP } from "./support/harness";
import { PHONE } from "./support/phone";

describe.each([
  ["a desktop", DESKTOP],
  ["a phone", PHONE],
])("accessibility on %s: no serious or critical axe-core violation", (_window, viewport) => {
  it.each(DASHBOARD_PAGES.map((entry) => [entry.name, entry] as const))("on the %s page", async (_name, entry) => {
    const page = await openDashboardPage(entry, viewport);
    expect(describeViolations(await blockingViolations(page))).toBe("");
  });
});
