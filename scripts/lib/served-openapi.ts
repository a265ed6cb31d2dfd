// The OpenAPI document as the app serves it, asked of the app itself bundled for Node: the document is made from the
// routes' zod schemas at request time, so no copy of it is kept in the repository to drift. The Durable Object classes
// the app's modules import are never constructed here, so `cloudflare:workers` is given a stand-in with the one
// export they extend. `npm run lint:openapi` writes it to a file; the CLI's tests read its operations.
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import type { Plugin } from "esbuild";

const root = fileURLToPath(new URL("../..", import.meta.url).href);
/** The origin the document is asked from: the one `npm start` serves, so its `servers` entry is the local one. */
const LOCAL_ORIGIN = "http://localhost:8787";

const workersStandIn: Plugin = {
  name: "cloudflare-workers-stand-in",
  setup(build) {
    build.onResolve({ filter: /^cloudflare:workers$/ }, () => ({ path: "cloudflare:workers", namespace: "stand-in" }));
    build.onLoad({ filter: /.*/, namespace: "stand-in" }, () => ({ contents: "export class DurableObject { constructor(ctx, env) { this.ctx = ctx; this.env = env; } }", loader: "js" }));
  },
};

/** The document as the app serves it, from a bundle of src/api/app.ts imported once and removed. */
export async function servedDocument(): Promise<unknown> {
  const { build } = await import("esbuild");
  const bundle = join(root, "dist", `openapi-app.${process.pid}.mjs`);
  mkdirSync(join(root, "dist"), { recursive: true });
  await build({ entryPoints: [join(root, "src", "api", "app.ts")], outfile: bundle, bundle: true, platform: "node", format: "esm", target: "node20", logLevel: "warning", plugins: [workersStandIn] });
  try {
    // The Worker's own types do not mix with Node's in one program: what is used of the app is said here.
    const { createApp } = (await import(pathToFileURL(bundle).href)) as { createApp(): { request(url: string): Promise<Response> } };
    const response = await createApp().request(`${LOCAL_ORIGIN}/openapi.json`);
    if (!response.ok) throw new Error(`GET /openapi.json answered ${response.status}: ${await response.text()}`);
    return await response.json();
  } finally {
    rmSync(bundle, { force: true });
  }
}
