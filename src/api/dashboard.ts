import type { Context } from "hono";
import type { AppEnv } from "./app-env";

/** Where the dashboard's page lives among the Static Assets (public/app/index.html). */
export const DASHBOARD_PAGE_PATH = "/app/";

/**
 * Whether the caller is a browser asking for a page: it lists text/html in Accept. curl (`*\/*`), the typed
 * client and the CLI (`application/json`) never do, so they keep getting the JSON `/` has always answered.
 */
export function wantsHtml(accept: string | undefined): boolean {
  return accept !== undefined && /(^|,)\s*text\/html\s*(;|,|$)/i.test(accept);
}

/**
 * The dashboard for a browser at `/`: a static page that signs in with an API token kept in the browser's
 * session storage and calls /v1 like any client. The page itself holds no data, so it needs no token.
 */
export async function dashboardPage(c: Context<AppEnv>): Promise<Response> {
  const page = await c.env.ASSETS.fetch(new Request(new URL(DASHBOARD_PAGE_PATH, c.req.url), { headers: { Accept: "text/html" } }));
  const response = new Response(page.body, page);
  // The same URL answers JSON to API clients: caches must keep the two apart.
  response.headers.set("Vary", "Accept");
  return response;
}
