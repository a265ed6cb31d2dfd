import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { api, openDashboard, REMOTE_URL, saveScreenshot } from "./support/harness";
import { expectFitsAPhone } from "./support/phone";
import { openWorkflow, uniqueId, workflowShows } from "./support/workflows";

interface Published {
  name: string;
  version: number;
  hash: string;
  definition: { steps: { id: string }[] };
}

const call = (path: string) => ({ type: "http", url: `${REMOTE_URL}/${path}` });

/** Version 1 runs its steps in list order; version 2 adds a check beside the reservation and a wait after the charge. */
function versions(name: string) {
  const first = { name, steps: [{ id: "reserve", action: call("reserve") }, { id: "charge", action: call("charge") }] };
  const second = {
    name,
    steps: [
      { id: "reserve", action: call("reserve") },
      { id: "fraud-check", dependsOn: [], action: call("reserve") },
      { id: "charge", dependsOn: ["reserve", "fraud-check"], action: call("charge") },
      { id: "approval", waitForEvent: { event: "approved", timeoutMs: 60_000 } },
    ],
  };
  return [first, second];
}

/** Publishes both versions and reads each back as the API gives it. */
async function publishTwoVersions(name: string): Promise<Published[]> {
  for (const definition of versions(name)) await api("PUT", `/v1/definitions/${name}`, definition);
  return Promise.all([1, 2].map((version) => api<Published>("GET", `/v1/definitions/${name}/versions/${version}`)));
}

async function openDefinitions(): Promise<Page> {
  const { page } = await openDashboard();
  await page.locator("header.top nav").getByRole("link", { name: "Definitions", exact: true }).click();
  await page.getByRole("heading", { name: "Definitions", level: 1 }).waitFor();
  return page;
}

const nodeIds = (page: Page) => page.locator('[data-testid="version-view"] [data-testid^="graph-node-"]').evaluateAll((nodes) => nodes.map((node) => node.getAttribute("data-testid")));
const edges = (page: Page) => page.locator('[data-testid="version-view"] [data-edge]').evaluateAll((paths) => paths.map((path) => path.getAttribute("data-edge")).sort());
const shownJson = async (page: Page) => JSON.parse((await page.getByTestId("definition-json").textContent()) ?? "");

describe("the definitions page", () => {
  it("lists a published definition with its latest version, that version's hash and when it was published", async () => {
    const name = uniqueId("order");
    const [, latest] = await publishTwoVersions(name);
    const page = await openDefinitions();
    const row = page.locator(`[data-testid="definition-list"] tr[data-definition="${name}"]`);
    await row.waitFor();

    expect(page.url()).toContain("#/definitions");
    expect(await row.getByTestId("definition-latest").textContent()).toBe("v2");
    expect(await row.getByTestId("definition-hash").textContent()).toBe(latest!.hash.slice(0, 12));
    expect(await row.getByTestId("definition-hash").getAttribute("title")).toBe(latest!.hash);
    expect(await row.textContent()).toMatch(/\d\d:\d\d:\d\d (now|\d+ s ago)$/);
    await saveScreenshot(page, "definitions");
  });

  it("shows each version's JSON as it was published and its step graph, the latest first", async () => {
    const name = uniqueId("order");
    const [first, second] = await publishTwoVersions(name);
    const page = await openDefinitions();
    await page.getByRole("link", { name, exact: true }).click();
    const view = page.getByTestId("version-view");
    await view.and(page.locator('[data-version="2"]')).waitFor();

    expect(await page.locator('[data-testid="version-list"] tbody tr').evaluateAll((rows) => rows.map((row) => row.getAttribute("data-version")))).toEqual(["2", "1"]);
    expect(await page.getByTestId("version-hash").textContent()).toBe(second!.hash);
    expect(await shownJson(page)).toEqual(second!.definition);
    // Laid out to be read: one field a line, indented.
    expect(await page.getByTestId("definition-json").textContent()).toContain('\n  "steps": [\n    {\n      "id": "reserve",');
    expect(await nodeIds(page)).toEqual(expect.arrayContaining(["graph-node-reserve", "graph-node-fraud-check", "graph-node-charge", "graph-node-approval"]));
    expect(await edges(page)).toEqual(["charge->approval", "fraud-check->charge", "reserve->charge"]);
    expect(await page.getByTestId("graph-node-approval").locator(".node-status").textContent()).toBe("wait for event");
    expect(await page.getByTestId("graph-node-reserve").locator(".node-status").textContent()).toBe("http");
    await saveScreenshot(page, "definition-version-2");

    await page.locator('[data-testid="version-list"] tr[data-version="1"]').getByRole("link", { name: "v1" }).click();
    await view.and(page.locator('[data-version="1"]')).waitFor();
    expect(page.url()).toContain(`#/definitions/${name}/1`);
    expect(await page.getByTestId("version-hash").textContent()).toBe(first!.hash);
    expect(await shownJson(page)).toEqual(first!.definition);
    // No dependsOn: after the step before it, as the service runs it.
    expect((await nodeIds(page)).sort()).toEqual(["graph-node-charge", "graph-node-reserve"]);
    expect(await edges(page)).toEqual(["reserve->charge"]);
    await saveScreenshot(page, "definition-version-1");
  });

  it("is reached from the workflow page of a workflow that runs a published version", async () => {
    const name = uniqueId("order");
    await publishTwoVersions(name);
    const id = uniqueId("by-ref");
    await api("POST", "/v1/workflows", { id, definitionRef: { name, version: 1 } });
    const page = await openWorkflow(id);
    await workflowShows(page, "completed");

    await page.getByTestId("workflow-definition").getByRole("link", { name: new RegExp(`^${name} v1`) }).click();
    await page.locator('[data-testid="version-view"][data-version="1"]').waitFor();
    expect(page.url()).toContain(`#/definitions/${name}/1`);
  });

  it("says so for a name that was never published", async () => {
    const { page } = await openDashboard({ path: "/#/definitions/never-published-here" });
    const alert = page.getByRole("alert");
    await alert.waitFor();
    expect(await alert.textContent()).toBe('No definition "never-published-here" for this token\'s tenant.');
  });

  it("fits a phone's width: the list and a version, its graph and its JSON, without scrolling sideways", async () => {
    const name = uniqueId("a-rather-long-definition-name-for-a-phone");
    await publishTwoVersions(name);
    const page = await openDefinitions();
    await page.locator(`tr[data-definition="${name}"]`).waitFor();
    await expectFitsAPhone(page);
    await page.goto(new URL(`/#/definitions/${name}`, page.url()).toString());
    await page.locator('[data-testid="version-view"][data-version="2"]').waitFor();
    await expectFitsAPhone(page);
    await saveScreenshot(page, "definition-phone");
  });
});
