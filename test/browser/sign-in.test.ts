import { expect, test } from "vitest";
import { BASE_URL, TOKEN, openDashboard, saveScreenshot } from "./support/harness";

test("a browser at / gets the dashboard, an API client still gets JSON", async () => {
  const page = await fetch(BASE_URL, { headers: { Accept: "text/html,application/xhtml+xml,*/*;q=0.8" } });
  expect(page.headers.get("content-type")).toMatch(/text\/html/);
  expect(await page.text()).toContain('<div id="app">');
  const api = await fetch(BASE_URL, { headers: { Accept: "*/*" } });
  expect(await api.json()).toMatchObject({ service: "shepherd", api: "/v1" });
});

test("signing in keeps the token in the tab's session storage, never in the URL", async () => {
  const { page } = await openDashboard({ signedIn: false });
  await saveScreenshot(page, "sign-in");
  await page.getByLabel("API token").fill("not-a-token");
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect.poll(() => page.getByRole("alert").textContent()).toContain("not accepted");

  await page.getByLabel("API token").fill(TOKEN);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("link", { name: "Workflows" }).waitFor();
  expect(await page.evaluate(() => sessionStorage.getItem("shepherd.token"))).toBe(TOKEN);
  expect(page.url()).not.toContain(TOKEN);

  await page.getByRole("button", { name: "Sign out" }).click();
  await page.getByLabel("API token").waitFor();
  expect(await page.evaluate(() => sessionStorage.getItem("shepherd.token"))).toBeNull();
});

test("the dashboard loads nothing from outside the service (it works offline)", async () => {
  const { page } = await openDashboard();
  const outside: string[] = [];
  page.on("request", (request) => {
    if (!request.url().startsWith(BASE_URL)) outside.push(request.url());
  });
  await page.reload();
  await page.getByRole("link", { name: "Workflows" }).waitFor();
  expect(outside).toEqual([]);
});
