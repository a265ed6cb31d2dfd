// Seeding a workflow and waiting on its page for what a user would see: the helpers the workflow pages' tests share.
import type { Page } from "playwright-core";
import { api, openDashboard } from "./harness";

/** Workflows run for real here: a step settles within seconds, never instantly. */
export const SETTLE_MS = 30_000;

let seeded = 0;
export function uniqueId(prefix: string): string {
  return `${prefix}-${(Date.now() % 1_000_000).toString(36)}${++seeded}`;
}

export async function start(id: string, definition: Record<string, unknown>, input?: unknown): Promise<void> {
  await api("POST", "/v1/workflows", { id, definition, ...(input === undefined ? {} : { input }) });
}

export async function openWorkflow(id: string): Promise<Page> {
  const { page } = await openDashboard({ path: `/#/workflows/${encodeURIComponent(id)}` });
  await page.getByTestId("workflow-page").waitFor();
  return page;
}

/** Waits until the page shows the step in that status (the node's status class, what a user sees as its colour). */
export async function stepShows(page: Page, stepId: string, status: string): Promise<void> {
  await page.locator(`[data-testid="graph-node-${stepId}"].${status}`).waitFor({ timeout: SETTLE_MS });
}

export async function workflowShows(page: Page, status: string): Promise<void> {
  await page.locator(`[data-testid="workflow-page"][data-status="${status}"]`).waitFor({ timeout: SETTLE_MS });
}
