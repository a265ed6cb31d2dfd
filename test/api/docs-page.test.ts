import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { bearer } from "../helpers/api";

const ORIGIN = "http://shepherd.test";

function get(path: string, headers: Record<string, string> = {}): Promise<Response> {
  return exports.default.fetch(`${ORIGIN}${path}`, { headers });
}

/** The `src` of every `<script>` tag on the page. */
function scriptSources(html: string): string[] {
  return [...html.matchAll(/<script\b[^>]*\bsrc\s*=\s*["']([^"']+)["']/gi)].map((match) => match[1] ?? "");
}

async function docsPage(): Promise<string> {
  const response = await get("/docs");
  expect(response.status).toBe(200);
  expect(response.headers.get("Content-Type")).toMatch(/^text\/html/);
  return response.text();
}

describe("GET /docs", () => {
  it("answers an HTML page that renders /openapi.json, without an API token", async () => {
    const html = await docsPage();
    expect(html).toContain('"url": "/openapi.json"');
  });

  it("loads its script from this origin, never from a CDN", async () => {
    const html = await docsPage();
    const sources = scriptSources(html);
    expect(sources.length).toBeGreaterThan(0);
    for (const src of sources) expect(new URL(src, ORIGIN).origin).toBe(ORIGIN);
    expect(html).not.toMatch(/<script\b[^>]*\bsrc\s*=\s*["']?(https?:)?\/\//i);
    expect(html).not.toMatch(/import\s*\{[^}]*\}\s*from\s*["']https?:/i);
  });

  it("turns off Scalar's buttons to outside services: the hosted client, the developer tools, the MCP installs", async () => {
    const html = await docsPage();
    expect(html).toContain('"hideClientButton": true');
    expect(html).toContain('"showDeveloperTools": "never"');
    expect(html).toMatch(/"mcp": \{\s*"disabled": true\s*\}/);
  });

  it("declares its language and names the copy buttons Scalar draws with an icon alone, for a screen reader", async () => {
    const html = await docsPage();
    expect(html).toMatch(/^<!doctype html>\s*<html lang="en">/i);
    expect(html).toContain('setAttribute("aria-label", "Copy the code")');
  });

  it("references a script that answers with JavaScript", async () => {
    const [src] = scriptSources(await docsPage());
    expect(src).toBeDefined();
    const response = await get(src ?? "");
    expect(response.status).toBe(200);
    expect(response.headers.get("Content-Type")).toMatch(/javascript/);
    const script = await response.text();
    // Scalar's standalone bundle defines the global the page calls.
    expect(script).toContain("createApiReference");
  });
});

describe("the routes around /docs", () => {
  it("still serves the OpenAPI document", async () => {
    const response = await get("/openapi.json");
    expect(response.status).toBe(200);
    const document: any = await response.json();
    expect(document.openapi).toBe("3.1.0");
  });

  it("still answers / with JSON", async () => {
    const response = await get("/", { Accept: "application/json" });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ service: "shepherd", api: "/v1", openapi: "/openapi.json" });
  });

  it("still answers an unknown /v1 path with a JSON 404", async () => {
    const response = await get("/v1/no-such-thing", bearer());
    expect(response.status).toBe(404);
    expect(response.headers.get("Content-Type")).toMatch(/^application\/json/);
    const body: any = await response.json();
    expect(body.error.code).toBe("not_found");
  });
});
