// Every page of the dashboard (support/dashboard-pages.ts) on a phone held upright (390 × 844): nothing overflows
// sideways, so the page never scrolls left and right (a wide table scrolls inside its own box), and the navigation
// can be reached. Each page's screenshot at that width is kept under test-results/browser/phone/.
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { DASHBOARD_PAGES, openDashboardPage } from "./support/dashboard-pages";
import { saveScreenshot } from "./support/harness";
import { PHONE } from "./support/phone";

/** How far the document reaches past the window's right edge, in CSS pixels, and the elements that reach furthest. */
function sidewaysOverflow(page: Page) {
  return page.evaluate(() => {
    const width = document.documentElement.clientWidth;
    const name = (element: Element) => `${element.tagName.toLowerCase()}${typeof element.className === "string" && element.className.trim() ? `.${element.className.trim().split(/\s+/).join(".")}` : ""}`;
    const past = [...document.querySelectorAll("body *")]
      .map((element) => ({ element, right: element.getBoundingClientRect().right }))
      .filter(({ right }) => right > width + 0.5)
      .sort((a, b) => b.right - a.right)
      .slice(0, 5)
      .map(({ element, right }) => `${name(element)} → ${Math.round(right)} px`);
    return { overflow: document.documentElement.scrollWidth - width, past };
  });
}

const byName = (name: string) => DASHBOARD_PAGES.find((entry) => entry.name === name)!;

describe("at a phone's width (390 px)", () => {
  it.each(DASHBOARD_PAGES.map((entry) => [entry.name, entry] as const))("the %s page does not overflow sideways", async (name, entry) => {
    const page = await openDashboardPage(entry, PHONE);
    await saveScreenshot(page, name, "phone");
    const { overflow, past } = await sidewaysOverflow(page);
    expect(overflow, `reaching past the window: ${past.join("; ")}`).toBeLessThanOrEqual(0);
  });

  it("wraps the navigation: every link is on screen, and a tap on it reaches it", async () => {
    const page = await openDashboardPage(byName("workflows"), PHONE);
    const links = await page.locator("header.top a, header.top button").evaluateAll((elements) =>
      elements.map((element) => {
        const box = element.getBoundingClientRect();
        const hit = document.elementFromPoint(box.left + box.width / 2, box.top + box.height / 2);
        return { text: element.textContent, left: box.left, right: box.right, reached: hit === element || element.contains(hit) };
      }),
    );
    expect(links.map(({ text }) => text)).toEqual(expect.arrayContaining(["Workflows", "Schedules", "Definitions", "Pools", "Webhooks", "Targets", "Dead letters", "Bulk jobs", "Metrics", "Sign out"]));
    for (const link of links) {
      expect(link, link.text ?? "").toMatchObject({ reached: true });
      expect(link.left).toBeGreaterThanOrEqual(0);
      expect(link.right).toBeLessThanOrEqual(PHONE.width);
    }
  });

  it("scrolls a table wider than the window inside its own box, which the keyboard can reach", async () => {
    const page = await openDashboardPage(byName("workflow"), PHONE);
    const box = page.locator(".table-scroll", { has: page.getByTestId("attempts-table") });
    const sizes = await box.evaluate((element) => ({ scrollWidth: element.scrollWidth, clientWidth: element.clientWidth }));
    expect(sizes.scrollWidth).toBeGreaterThan(sizes.clientWidth);
    expect(await box.getAttribute("tabindex")).toBe("0");
    expect(await box.getAttribute("aria-label")).toBe("Attempts");
    await box.focus();
    await page.keyboard.press("ArrowRight");
    await expect.poll(() => box.evaluate((element) => element.scrollLeft)).toBeGreaterThan(0);
  });
});
