// Copies the browser code the Worker's pages load from node_modules into the Static Assets directory, so
// /docs and the dashboard at / load it from this Worker instead of a CDN (both must work without internet
// access). The copies are not committed: they are rebuilt from the installed packages after every
// `npm install`, and before start, test and deploy.
import { copyFile, mkdir } from "node:fs/promises";
import "./generate-contract.ts";

/** [what in node_modules, where under public/]. */
const COPIES: ReadonlyArray<readonly [string, string]> = [
  // The API reference's single-file bundle (/docs).
  ["@scalar/api-reference/dist/browser/standalone.js", "docs/scalar/standalone.js"],
  // The dashboard's view library: Preact, its hooks and htm (tagged templates instead of a JSX build step).
  ["preact/dist/preact.mjs", "vendor/preact.mjs"],
  ["preact/hooks/dist/hooks.mjs", "vendor/preact-hooks.mjs"],
  ["htm/dist/htm.mjs", "vendor/htm.mjs"],
];

const modules = new URL("../node_modules/", import.meta.url);
const assets = new URL("../public/", import.meta.url);
for (const [from, to] of COPIES) {
  const target = new URL(to, assets);
  await mkdir(new URL(".", target), { recursive: true });
  await copyFile(new URL(from, modules), target);
}
console.log(`browser assets copied to public/: ${COPIES.map(([, to]) => to).join(", ")}`);
