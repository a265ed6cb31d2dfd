// What a browser test needs: Chromium (Debian's, driven by playwright-core), a page signed in to the
// dashboard of the service the global setup started, the typed client to seed workflows, and screenshots
// kept as the run's artifacts.
import { mkdirSync } from "node:fs";
import { chromium, type Browser, type Page } from "playwright-core";
import { afterAll, afterEach, inject } from "vitest";
import { BROWSER_TOKEN } from "./global-setup";

export const BASE_URL = inject("baseUrl");
export const REMOTE_URL = inject("remoteUrl");
export const TOKEN = BROWSER_TOKEN;

/**
 * The API as the tests' seeding hand: JSON in, JSON out, the API's error as a thrown Error. (The typed
 * client's types come from the Worker's, which do not mix with Node's and the DOM's in one program.)
 */
export async function api<T = any>(method: string, path: string, body?: unknown): Promise<T> {
  const response = await fetch(new URL(path, BASE_URL), {
    method,
    headers: { Authorization: `Bearer ${TOKEN}`, ...(body === undefined ? {} : { "Content-Type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const parsed = await response.json().catch(() => undefined);
  if (!response.ok) throw new Error(`${method} ${path} answered ${response.status}: ${JSON.stringify(parsed)}`);
  return parsed as T;
}

/** Where Debian's package puts it; CHROMIUM_PATH overrides (another distribution, a local build). */
const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
/**
 * As root and without a network: no sandbox, no GPU, and none of the background connections (updates,
 * sync, QUIC probes) that a closed network refuses many at a time.
 */
const CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"];
export const SCREENSHOT_DIR = "test-results/browser";

let browser: Browser | undefined;
const pages: Page[] = [];

async function theBrowser(): Promise<Browser> {
  browser ??= await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  return browser;
}

/** A desktop's window, unless a test asks for another (a phone's: support/phone.ts). */
export const DESKTOP = { width: 1360, height: 900 };

interface OpenOptions {
  signedIn?: boolean;
  path?: string;
  viewport?: { width: number; height: number };
  /** Runs before the page is loaded: answers to set in the browser (`page.route`), say. */
  beforeLoad?: (page: Page) => Promise<void>;
}

/** A fresh page (its own session storage) at the dashboard; signed in unless `signedIn` is false. */
export async function openDashboard({ signedIn = true, path = "/", viewport = DESKTOP, beforeLoad }: OpenOptions = {}): Promise<{ page: Page }> {
  const context = await (await theBrowser()).newContext({ viewport });
  if (signedIn) await context.addInitScript((token) => sessionStorage.setItem("shepherd.token", token), TOKEN);
  const page = await context.newPage();
  // A script error on the page fails the test that caused it, not a later one.
  const errors: string[] = [];
  page.on("pageerror", (error) => errors.push(error.message));
  pageErrors.set(page, errors);
  pages.push(page);
  await beforeLoad?.(page);
  await page.goto(new URL(path, BASE_URL).toString());
  return { page };
}

const pageErrors = new WeakMap<Page, string[]>();

/** The uncaught errors the page's scripts threw so far. */
export function errorsOf(page: Page): string[] {
  return pageErrors.get(page) ?? [];
}

/**
 * A full-page PNG under test-results/browser/ (or a folder in it: `phone/`), the run's artifact (and the README's
 * screenshot).
 */
export async function saveScreenshot(page: Page, name: string, folder = ""): Promise<string> {
  const dir = folder ? `${SCREENSHOT_DIR}/${folder}` : SCREENSHOT_DIR;
  mkdirSync(dir, { recursive: true });
  const path = `${dir}/${name}.png`;
  await page.screenshot({ path, fullPage: true });
  return path;
}

afterEach(async () => {
  for (const page of pages.splice(0)) {
    const errors = errorsOf(page);
    await page.context().close();
    if (errors.length > 0) throw new Error(`the page threw: ${errors.join("; ")}`);
  }
});

afterAll(async () => {
  await browser?.close();
  browser = undefined;
});
