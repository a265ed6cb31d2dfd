import { expect, test } from "vitest";
import { BASE_URL, openDashboard } from "./support/harness";

/** Every link and button the reader can see, with where a link leads. */
async function visibleControls(page: Awaited<ReturnType<typeof openDashboard>>["page"]) {
  return page.evaluate(() =>
    [...document.querySelectorAll("a[href], button")]
      .filter((element) => element.getClientRects().length > 0 && getComputedStyle(element).visibility !== "hidden")
      .map((element) => ({ text: (element.textContent ?? "").trim().slice(0, 60), href: (element as HTMLAnchorElement).href ?? "" })),
  );
}

test("the API reference has no link or button to an outside service, and loads nothing from outside", async () => {
  const outside: string[] = [];
  const { page } = await openDashboard({ signedIn: false, path: "/docs" });
  page.on("request", (request) => {
    if (!request.url().startsWith(BASE_URL)) outside.push(request.url());
  });
  await page.reload();
  await page.getByText("Workflows that finish or unwind cleanly.").waitFor();

  const controls = await visibleControls(page);
  expect(controls.length).toBeGreaterThan(10);
  expect(controls.filter(({ href }) => href !== "" && !href.startsWith(BASE_URL))).toEqual([]);
  expect(controls.map(({ text }) => text)).not.toContain("Share");
  expect(controls.map(({ text }) => text)).not.toContain("Deploy");
  expect(outside).toEqual([]);
});

test("the API reference's sample requests are sent to the service it is read from", async () => {
  const { page } = await openDashboard({ signedIn: false, path: "/docs" });
  await page.getByText("Workflows that finish or unwind cleanly.").waitFor();

  await expect.poll(() => page.locator("body").innerText()).toContain(`curl ${new URL(BASE_URL).origin}/v1/workflows`);
});
