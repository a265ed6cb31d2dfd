import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { wantsHtml } from "../../src/api/dashboard";

const ORIGIN = "http://shepherd.test";
const BROWSER_ACCEPT = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8";

function get(path: string, accept?: string): Promise<Response> {
  return exports.default.fetch(`${ORIGIN}${path}`, accept === undefined ? {} : { headers: { Accept: accept } });
}

describe("GET / by content negotiation", () => {
  it("answers a browser with the dashboard's page, without an API token", async () => {
    const response = await get("/", BROWSER_ACCEPT);
    expect(response.status).toBe(200);
    expect(response.headers.get("Content-Type")).toMatch(/^text\/html/);
    expect(response.headers.get("Vary")).toMatch(/Accept/);
    const html = await response.text();
    expect(html).toContain('<div id="app">');
    expect(html).toContain('src="/app/main.js"');
  });

  it.each([undefined, "*/*", "application/json"])("answers an API client (Accept %s) with the JSON it always got", async (accept) => {
    const response = await get("/", accept);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ service: "shepherd", api: "/v1", openapi: "/openapi.json" });
  });

  it("loads every script of the page from this origin (the dashboard works offline)", async () => {
    const html = await (await get("/", BROWSER_ACCEPT)).text();
    const importMap = JSON.parse(/<script type="importmap">([\s\S]*?)<\/script>/.exec(html)?.[1] ?? "{}") as { imports: Record<string, string> };
    const sources = [...html.matchAll(/\b(?:src|href)="([^"]+)"/g)].map((match) => match[1] ?? "");
    for (const url of [...sources, ...Object.values(importMap.imports)]) {
      expect(new URL(url, ORIGIN).origin).toBe(ORIGIN);
      const asset = await env.ASSETS.fetch(new URL(url, ORIGIN));
      expect(asset.status, url).toBe(200);
    }
    expect(Object.keys(importMap.imports).sort()).toEqual(["htm", "preact", "preact/hooks"]);
  });
});

describe("wantsHtml", () => {
  it.each([
    [BROWSER_ACCEPT, true],
    ["text/html", true],
    ["application/json, text/html;q=0.5", true],
    ["*/*", false],
    ["application/json", false],
    ["text/htmlx", false],
    [undefined, false],
  ])("%s → %s", (accept, expected) => {
    expect(wantsHtml(accept)).toBe(expected);
  });
});
