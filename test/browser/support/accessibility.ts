// axe-core, the accessibility engine, run inside the page: its script is read from node_modules and added to the
// page by playwright-core, then `axe.run` checks the document as the browser rendered it (colours, names, roles).
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import type { AxeResults, ImpactValue, Result } from "axe-core";
import type { Page } from "playwright-core";

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

/** What the check refuses: a violation a user of a screen reader, a keyboard or low vision cannot get around. */
export const BLOCKING_IMPACTS: ImpactValue[] = ["serious", "critical"];

/** The violations of a blocking impact on the page as it stands, with the elements each was found on. */
export async function blockingViolations(page: Page): Promise<Result[]> {
  if (!(await page.evaluate(() => "axe" in window))) await page.addScriptTag({ content: AXE_SOURCE });
  const results = await page.evaluate(() => (window as unknown as { axe: { run: (options: object) => Promise<AxeResults> } }).axe.run({ resultTypes: ["violations"] }));
  return results.violations.filter((violation) => BLOCKING_IMPACTS.includes(violation.impact ?? null));
}

/** "color-contrast (serious): .status.completed, …": each violation's rule, impact and where, one a line. */
export function describeViolations(violations: Result[]): string {
  return violations
    .map((violation) => {
      const targets = violation.nodes.map((node) => node.target.join(" ")).join(", ");
      return `${violation.id} (${violation.impact}): ${violation.help} — ${targets}`;
    })
    .join("\n");
}
