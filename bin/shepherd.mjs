#!/usr/bin/env node
// `npx shepherd …`: the command line of Shepherd's API (src/cli), bundled into dist/shepherd.mjs. A fresh clone, or
// a working tree whose src/cli or src/client changed since the last build, gets it built first.
import { pathToFileURL } from "node:url";
import { buildCli, CLI_BUNDLE, cliBundleIsStale } from "../scripts/build-cli.ts";

if (cliBundleIsStale()) {
  try {
    await buildCli();
  } catch (error) {
    console.error(`shepherd: could not build ${CLI_BUNDLE} (run npm install?): ${error.message}`);
    process.exit(1);
  }
}
await import(pathToFileURL(CLI_BUNDLE).href);
