// Copies Scalar's single-file browser bundle into the Static Assets directory, so the API reference at /docs
// loads it from this Worker instead of a CDN (the page must work without internet access). The copy is not
// committed: it is rebuilt from the installed package after every `npm install`, and before start and deploy.
import { copyFile, mkdir } from "node:fs/promises";

const source = new URL("../node_modules/@scalar/api-reference/dist/browser/standalone.js", import.meta.url);
const targetDir = new URL("../public/docs/scalar/", import.meta.url);

await mkdir(targetDir, { recursive: true });
await copyFile(source, new URL("standalone.js", targetDir));
console.log("API reference bundle copied to public/docs/scalar/standalone.js");
