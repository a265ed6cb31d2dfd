// `node bench/summarize-profile.ts FILE.cpuprofile [--steps N] [--top 25] [--json]`: where the profiled CPU
// went, as Markdown tables (bench/lib/profile-summary.ts). `npm run bench -- … --profile FILE` takes such a
// profile and prints this command with the run's step count.
/* global process, console */
import { readFileSync } from "node:fs";
import { readCommandLine, flagSpec, integer, readFlags } from "../scripts/lib/cli.ts";
import { asCpuProfile } from "./lib/cpu-profile.ts";
import { renderProfileSummary, summarizeProfile } from "./lib/profile-summary.ts";

const USAGE = `node bench/summarize-profile.ts FILE.cpuprofile [options]

  --steps N   steps the profiled load executed: adds the per-step column
  --top N     functions listed by self time (default 25)
  --json      the summary as JSON instead of Markdown
`;

interface SummaryOptions {
  help: boolean;
  file?: string;
  steps?: number;
  top?: number;
  json?: boolean;
}

function parse(argv: string[]): SummaryOptions {
  const [file, ...rest] = argv;
  if (file === "--help" || file === "-h") return { help: true };
  if (!file || file.startsWith("-")) throw new Error("the first argument is the .cpuprofile to read");
  const { values } = readFlags(rest, flagSpec({ values: ["steps", "top"], switches: ["json"] }));
  return {
    help: Boolean(values.help),
    file,
    steps: values.steps === undefined ? undefined : integer(values.steps, "--steps"),
    top: values.top === undefined ? 25 : integer(values.top, "--top"),
    json: Boolean(values.json),
  };
}

const { options, exitCode } = readCommandLine(process.argv.slice(2), { tool: "summarize-profile", usage: USAGE, parse });
if (options?.file !== undefined) {
  const profile = asCpuProfile(JSON.parse(readFileSync(options.file, "utf8")), options.file);
  const summary = summarizeProfile(profile, { steps: options.steps, top: options.top });
  console.log(options.json ? JSON.stringify(summary, null, 2) : renderProfileSummary(summary, { title: options.file }));
} else {
  process.exitCode = exitCode;
}
