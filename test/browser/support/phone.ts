// A phone's width: the page laid out at 390 px, and whether anything makes it scroll sideways.
import type { Page } from "playwright-core";
import { expect } from "vitest";

export const PHONE = { width: 390, height: 844 };

/** Narrows the page to a phone's width and expects the page itself not to scroll sideways (a table may, in its box). */
export async function expectFitsAPhone(page: Page): Promise<void> {
  await page.setViewportSize(PHONE);
  const widths = await page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, client: document.documentElement.clientWidth }));
  expect(widths.scroll, "the page's width at 390 px").toBeLessThanOrEqual(widths.client);
}
