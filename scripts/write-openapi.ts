// Writes dist/openapi.json, the document `GET /openapi.json` serves, for `npm run lint:openapi` (Redocly's linter
// reads a file).
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { servedDocument } from "./lib/served-openapi.ts";

export const OPENAPI_DOCUMENT = join(fileURLToPath(new URL("..", import.meta.url).href), "dist", "openapi.json");

writeFileSync(OPENAPI_DOCUMENT, `${JSON.stringify(await servedDocument(), null, 2)}\n`);
console.log("OpenAPI document written to dist/openapi.json");
