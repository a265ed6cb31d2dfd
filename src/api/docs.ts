import { Hono } from "hono";
import { Scalar } from "@scalar/hono-api-reference";
import type { AppEnv } from "./app-env";

/**
 * Where the page loads Scalar's browser bundle from: a Static Asset of this Worker (public/docs/scalar/,
 * copied from the installed package), never the CDN the middleware defaults to, so the page works offline.
 */
export const SCALAR_BUNDLE_PATH = "/docs/scalar/standalone.js";

/**
 * The API reference: an HTML page that renders `GET /openapi.json` in the browser. Like the document it
 * renders, it needs no API token; the page's own "try it" requests carry whatever token the reader enters.
 */
export const docsRoutes = new Hono<AppEnv>();

docsRoutes.get(
  "/docs",
  Scalar({
    url: "/openapi.json",
    cdn: SCALAR_BUNDLE_PATH,
    pageTitle: "Shepherd API reference",
    // Each of these would reach a scalar.com host from the reader's browser: fonts, telemetry, the AI agent.
    withDefaultFonts: false,
    telemetry: false,
    agent: { disabled: true },
    // And each of these is a button to an outside service: the hosted API client (client.scalar.com), the
    // developer tools' Share and Deploy (Scalar's registry), the MCP server's VS Code and Cursor installs, and the
    // footer's link to scalar.com, which no option turns off.
    hideClientButton: true,
    showDeveloperTools: "never",
    mcp: { disabled: true },
    customCss: 'a[href^="https://www.scalar.com"] { display: none !important; }',
  }),
);

// The platform serves the bundle before the Worker runs; this route answers when the Worker is called
// directly (tests, or a request the asset router hands over) by asking the same assets.
docsRoutes.get(SCALAR_BUNDLE_PATH, (c) => c.env.ASSETS.fetch(c.req.raw));
