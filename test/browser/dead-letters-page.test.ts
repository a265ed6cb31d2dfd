import type { Page, Route } from "playwright-core";
import { describe, expect, it } from "vitest";
import { openDashboard, saveScreenshot } from "./support/harness";

interface DeadLetter {
  messageId: string;
  tenant: string | null;
  workflowId: string | null;
  error: { code: string; message: string; details?: { path: (string | number)[]; message: string; code: string }[] };
  body: string;
  bodyTruncated: boolean;
  attempts: number;
  firstSeenAt: number;
  lastSeenAt: number;
}

const minutesAgo = (minutes: number) => Date.now() - minutes * 60_000;

const badBody: DeadLetter = {
  messageId: "m-bad-body",
  tenant: "browser",
  workflowId: "order-1",
  error: {
    code: "validation_failed",
    message: "Invalid message: start.definition.steps: Too small: expected array to have >=1 items.",
    details: [
      { path: ["start", "definition", "steps"], message: "Too small: expected array to have >=1 items", code: "too_small" },
      { path: ["start", "input"], message: "Invalid input", code: "invalid_type" },
    ],
  },
  body: JSON.stringify({ tenant: "browser", start: { id: "order-1", definition: { name: "order", steps: [] } } }),
  bodyTruncated: false,
  attempts: 1,
  firstSeenAt: minutesAgo(3),
  lastSeenAt: minutesAgo(3),
};

const unknownTenant: DeadLetter = {
  messageId: "m-unknown",
  tenant: "acmee",
  workflowId: null,
  error: { code: "unknown_tenant", message: 'No tenant "acmee" in this deployment\'s API_TOKENS: the message\'s tenant must be one of them.' },
  body: `{"tenant":"acmee","start":{"definition":{"name":"big","steps":[{"id":"a","action":{"type":"http","url":"https://x.example"}}]},"input":{"blob":"xxxx`,
  bodyTruncated: true,
  attempts: 2,
  firstSeenAt: minutesAgo(1),
  lastSeenAt: minutesAgo(1),
};

/**
 * Answers GET /v1/starts/dead-letters from the browser's side: the first page without a cursor, the second with the
 * first's nextCursor; the cursors asked for are kept.
 */
async function answerDeadLetters(page: Page, pages: { deadLetters: DeadLetter[]; nextCursor?: string }[]): Promise<string[]> {
  const asked: string[] = [];
  await page.route("**/v1/starts/dead-letters*", (route: Route) => {
    const cursor = new URL(route.request().url()).searchParams.get("cursor") ?? "";
    asked.push(cursor);
    return route.fulfill({ json: cursor === "" ? pages[0] : pages[1] });
  });
  return asked;
}

const row = (page: Page, messageId: string) => page.locator(`[data-testid="dead-letter-list"] tr[data-message="${messageId}"]`);

describe("the dead letters page", () => {
  it("lists each message that could never start with its error, its issues and its body, a page at a time", async () => {
    const { page } = await openDashboard();
    const asked = await answerDeadLetters(page, [{ deadLetters: [unknownTenant, badBody], nextCursor: "c1" }, { deadLetters: [{ ...badBody, messageId: "m-older", workflowId: "order-0" }] }]);
    await page.getByRole("link", { name: "Dead letters" }).click();
    await page.getByRole("heading", { name: "Dead letters" }).waitFor();
    const bad = row(page, "m-bad-body");
    await bad.waitFor();

    expect(page.url()).toContain("#/dead-letters");
    expect(await bad.getByTestId("dead-letter-tenant").textContent()).toBe("browser");
    expect(await bad.getByTestId("dead-letter-workflow").textContent()).toBe("order-1");
    expect(await bad.getByTestId("dead-letter-error").textContent()).toContain("validation_failed Invalid message: start.definition.steps");
    expect(await bad.locator("ul.issues li").allTextContents()).toEqual(["start.definition.steps: Too small: expected array to have >=1 items", "start.input: Invalid input"]);
    expect(await bad.getByTestId("dead-letter-attempts").textContent()).toBe("1");
    expect(await bad.getByTestId("dead-letter-body").isVisible()).toBe(false);
    await bad.getByText("m-bad-body").click();
    expect(JSON.parse((await bad.getByTestId("dead-letter-body").textContent())!)).toEqual(JSON.parse(badBody.body));

    const unknown = row(page, "m-unknown");
    expect(await unknown.getByTestId("dead-letter-error").textContent()).toContain('unknown_tenant No tenant "acmee"');
    expect(await unknown.getByTestId("dead-letter-workflow").textContent()).toBe("—");
    await unknown.getByText("m-unknown").click();
    // Cut short, so not JSON: shown as kept, and said to be cut.
    expect(await unknown.getByTestId("dead-letter-body").textContent()).toBe(unknownTenant.body);
    expect(await unknown.getByTestId("dead-letter-truncated").textContent()).toContain("Cut at");
    // Newest first, as the API answers.
    expect(await page.locator('[data-testid="dead-letter-list"] tbody tr').evaluateAll((rows) => rows.map((r) => r.getAttribute("data-message")))).toEqual(["m-unknown", "m-bad-body"]);
    await saveScreenshot(page, "dead-letters");

    await page.getByRole("link", { name: "Next →" }).click();
    await row(page, "m-older").waitFor();
    expect(asked).toContain("c1");
    expect(await page.getByTestId("page-number").textContent()).toBe("Page 2");
    expect(await row(page, "m-bad-body").count()).toBe(0);
  });

  it("says what would be listed when the service has no dead letter", async () => {
    // The service's own answer: nothing was ever sent to its STARTS queue.
    const { page } = await openDashboard({ path: "/#/dead-letters" });
    const empty = page.getByRole("status");
    await empty.waitFor();
    expect(await empty.textContent()).toContain("No dead letters");
    expect(await page.getByTestId("dead-letter-list").count()).toBe(0);
  });
});
