import { Hono } from "hono";
import { Scalar } from "@scalar/hono-api-reference";
import type { AppEnv } from "./app-env";

/**
 * Where the page loads Scalar's browser bundle from: a Static Asset of this Worker (public/docs/scalar/,
 * copied from the installed package), never the CDN the middleware defaults to, so the page works offline.
 */
export const SCALAR_BUNDLE_PATH = "/docs/scalar/standalone.js";

/**
 * Scalar's light theme reads its muted text and its HTTP methods' colours at 3–4.3:1; these read at 4.5:1 or more
 * (WCAG AA, which the browser tests check with axe-core), as does the blue of the code samples on their dark
 * background. `body.light-mode` and `body .dark-mode` outrank the bundle's own `.light-mode` and `.dark-mode`, which
 * it adds to the page after this.
 */
const READABLE_COLOURS = `
body.light-mode { --scalar-color-2: #696969; --scalar-color-3: #6b6b6b; --scalar-color-green: #00774d; --scalar-color-blue: #0068a8; --scalar-color-orange: #c24100; }
body .dark-mode { --scalar-color-blue: #8b9bf0; }`;

/**
 * Each code sample's copy button is an icon with no name, so a screen reader announces only "button": it gets one as
 * Scalar draws it.
 */
const NAME_COPY_BUTTONS = `new MutationObserver(() => {
  for (const button of document.querySelectorAll("button.scalar-code-copy:not([aria-label])")) button.setAttribute("aria-label", "Copy the code");
}).observe(document.documentElement, { childList: true, subtree: true });`;

/**
 * The API reference: an HTML page that renders `GET /openapi.json` in the browser. Like the document it
 * renders, it needs no API token; the page's own "try it" requests carry whatever token the reader enters.
 */
export const docsRoutes = new Hono<AppEnv>();

// Scalar's page as it renders it, with the language of its text declared (its <html> has none) and its copy
// buttons named.
docsRoutes.use("/docs", async (c, next) => {
  await next();
  if (!c.res.headers.get("content-type")?.startsWith("text/html")) return;
  const page = (await c.res.text()).replace("<html>", '<html lang="en">').replace("</body>", `<script>${NAME_COPY_BUTTONS}</script>\n</body>`);
  const headers = new Headers(c.res.headers);
  headers.delete("content-length");
  c.res = new Response(page, { status: c.res.status, headers });
});

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
    customCss: `a[href^="https://www.scalar.com"] { display: none !important; }${READABLE_COLOURS}`,
  }),
);

// The platform serves the bundle before the Worker runs; this route answers when the Worker is called
// directly (tests, or a request the asset router hands over) by asking the same assets.
docsRoutes.get(SCALAR_BUNDLE_PATH, (c) => c.env.ASSETS.fetch(c.req.raw));
