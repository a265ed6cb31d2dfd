// What the workflow page must say plainly: a step's box shows its words whole, a 202 job is told apart from a wait
// for an event, the cancel dialog's buttons are not all "Cancel", and a run of a few milliseconds has a scale.
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { axisTicks } from "../../public/app/workflow/timeline-model.js";
import { offsetLabel } from "../../public/app/workflow/time.js";
import { REMOTE_URL, api } from "./support/harness";
import { SETTLE_MS, openWorkflow, start, stepShows, uniqueId, workflowShows } from "./support/workflows";

const http = (path: string, extra: Record<string, unknown> = {}) => ({ action: { type: "http", url: `${REMOTE_URL}${path}` }, ...extra });

/** Each text of each box in the graph: how far right it reaches, against how far it may (the box less its margin). */
function boxTexts(page: Page) {
  return page.locator('[data-testid^="graph-node-"]').evaluateAll((nodes) =>
    nodes.flatMap((node) => {
      const width = Number(node.querySelector("rect")!.getAttribute("width"));
      return [...node.querySelectorAll("text")].map((text) => ({
        step: node.getAttribute("data-testid"),
        text: text.textContent,
        right: Number(text.getAttribute("x")) + (text as SVGTextElement).getComputedTextLength(),
        limit: width - Number(text.getAttribute("x")),
      }));
    }),
  );
}

const colourOf = (page: Page, selector: string, property: "fill" | "backgroundColor") =>
  page.locator(selector).first().evaluate((element, name) => getComputedStyle(element)[name], property);

describe("the workflow page, read plainly", () => {
  it("draws every word of a step's box inside it: a long id wraps, what cannot fit ends in … and the tooltip has it whole", async () => {
    const id = uniqueId("long-names");
    const unbroken = "averyveryverylongstepidentifierwithoutanyseparatorsbetweenitswordsatall";
    await start(id, {
      name: "long-names",
      steps: [
        { id: "notify-customer-by-email-and-sms", ...http("/ship") },
        { id: unbroken, dependsOn: [], sleep: { durationMs: 1 } },
        // No worker polls this pool: the step waits there, its pool's name on its box.
        { id: "render", dependsOn: [], action: { type: "worker", pool: "gpu-workers-in-the-basement-rack-number-two" } },
      ],
    });
    const page = await openWorkflow(id);
    await stepShows(page, "render", "scheduled");
    await stepShows(page, unbroken, "succeeded");

    const texts = await boxTexts(page);
    expect(texts.length).toBeGreaterThanOrEqual(6);
    for (const text of texts) expect(text.right, `${text.step}: "${text.text}"`).toBeLessThanOrEqual(text.limit + 0.5);
    const wrapped = page.getByTestId("graph-node-notify-customer-by-email-and-sms");
    expect(await wrapped.locator("text.node-id").allTextContents()).toEqual(["notify-customer-", "by-email-and-sms"]);
    const cut = page.getByTestId(`graph-node-${unbroken}`);
    expect((await cut.locator("text.node-id").allTextContents()).at(-1)).toMatch(/…$/);
    expect(await cut.locator("title").textContent()).toContain(unbroken);
    const pooled = await page.getByTestId("graph-node-render").locator("text.node-status").allTextContents();
    expect(pooled).toEqual(["scheduled · pool", expect.stringMatching(/^gpu-workers-.*…$/)]);
    expect(await page.getByTestId("graph-node-render").locator("title").textContent()).toContain("pool gpu-workers-in-the-basement-rack-number-two");
    await api("POST", `/v1/workflows/${id}/cancel`);
  });

  it("tells a 202 job awaiting its callback from a wait for an event: its own colour and words in the graph, the timeline and the legend", async () => {
    const id = uniqueId("two-waits");
    // /render answers 202 and its first job per key heartbeats "47 %" until it is told to stop: a job that stays open.
    await start(id, { name: "two-waits", steps: [{ id: "render", ...http("/render") }, { id: "approval", dependsOn: [], waitForEvent: { event: "approved", timeoutMs: 3_600_000 } }] });
    const page = await openWorkflow(id);
    await stepShows(page, "render", "waiting");
    await stepShows(page, "approval", "waiting");

    expect(await page.getByTestId("graph-node-render").getAttribute("class")).toContain("awaiting_callback");
    expect(await page.getByTestId("graph-node-approval").getAttribute("class")).not.toContain("awaiting_callback");
    expect(await page.getByTestId("graph-node-render").locator("text.node-status").allTextContents()).toEqual(["waiting · 202 job"]);
    const job = await colourOf(page, '[data-testid="graph-node-render"] rect', "fill");
    expect(job).not.toBe(await colourOf(page, '[data-testid="graph-node-approval"] rect', "fill"));

    const bar = await colourOf(page, '[data-testid="timeline-step-render"] .tl-attempt', "backgroundColor");
    expect(bar).toBe(job);
    expect(bar).not.toBe(await colourOf(page, '[data-testid="timeline-step-approval"] .tl-timer.wait', "backgroundColor"));
    const legend = page.locator(".tl-legend span");
    const swatch = (words: string) => colourOf(page, `.tl-legend span:has-text("${words}") i`, "backgroundColor");
    expect(await legend.allTextContents()).toEqual(expect.arrayContaining(["202 job awaiting its callback", "wait for an event"]));
    expect(await swatch("202 job awaiting its callback")).toBe(job);
    expect(await swatch("202 job awaiting its callback")).not.toBe(await swatch("wait for an event"));
    await api("POST", `/v1/workflows/${id}/cancel`);
  });

  it("asks to cancel in words that cannot be mistaken: “Cancel workflow X?”, “Cancel workflow” or “Keep running”", async () => {
    const id = uniqueId("cancel-words");
    await start(id, { name: "cancel-words", steps: [{ id: "approval", waitForEvent: { event: "approved", timeoutMs: 3_600_000 } }] });
    const page = await openWorkflow(id);
    await stepShows(page, "approval", "waiting");

    await page.locator('[data-action="cancel"]').click();
    const dialog = page.locator('dialog[data-confirm="cancel"]');
    expect(await dialog.getByRole("heading").textContent()).toBe(`Cancel workflow ${id}?`);
    expect(await dialog.getByRole("button").allTextContents()).toEqual(["Keep running", "Cancel workflow"]);
    expect(await page.getByRole("dialog", { name: `Cancel workflow ${id}?` }).count()).toBe(1);

    await dialog.getByRole("button", { name: "Keep running" }).click();
    await dialog.waitFor({ state: "hidden" });
    expect((await api("GET", `/v1/workflows/${id}`)).status).toBe("running");

    await page.locator('[data-action="cancel"]').click();
    await dialog.getByRole("button", { name: "Cancel workflow" }).click();
    await workflowShows(page, "cancelled");
  });

  it("gives a run of a few milliseconds a scale in milliseconds, from 0 to its end", async () => {
    const id = uniqueId("blink");
    await start(id, { name: "blink", steps: [{ id: "approval", waitForEvent: { event: "approved", timeoutMs: 3_600_000 } }] });
    await api("POST", `/v1/workflows/${id}/cancel`);
    const view = await api("GET", `/v1/workflows/${id}`);
    const page = await openWorkflow(id);
    await workflowShows(page, "cancelled");

    const labels = await page.locator('[data-testid="timeline"] .tl-axis .tl-tick').allTextContents();
    expect(labels[0]).toBe("0");
    expect(labels.at(-1)).toBe(offsetLabel(view.endedAt - view.createdAt));
    expect(labels.at(-1)).toMatch(/^\+\d+ ms$/);
  }, SETTLE_MS);
});

describe("the timeline's axis", () => {
  it("ticks a 12 ms run every 2 ms and a 3 s one every 500 ms", () => {
    expect(axisTicks(0, 12).map((tick: { offset: number }) => offsetLabel(tick.offset))).toEqual(["0", "+2 ms", "+4 ms", "+6 ms", "+8 ms", "+10 ms", "+12 ms"]);
    expect(axisTicks(1_000, 4_000).map((tick: { offset: number }) => tick.offset)).toEqual([0, 500, 1_000, 1_500, 2_000, 2_500, 3_000]);
  });
});
