import type { StartBatchResult, StartRequest } from "../../client/index";
import { MAX_BATCH_STARTS } from "../../domain/contract";
import { usageLine, type Command } from "../command";
import { readDocument } from "../documents";
import { EXIT, UsageError } from "../failures";

export const startBatch: Command = {
  name: "start-batch",
  summary: `start up to ${MAX_BATCH_STARTS} workflows in one request, from a JSON or YAML file holding a list`,
  args: ["<file>"],
  notes: [
    "The file (\"-\" for stdin) holds a list (or {workflows: [...]}); each item a definition ({name, steps, ...}) or a whole start request.",
    "Each item is started as start would start it alone: one line per item, its status and workflow or its error.",
    "Exits 1 when any item was refused (the others were started all the same).",
  ],
  async run({ client, out, args: [file = ""] }) {
    const requests = itemsOf(readDocument(file, usageLine(startBatch)), file);
    const { results } = await client.startBatch(requests);
    out.result({ results }, (answer) => answer.results.map(resultLine));
    const refused = results.filter((result) => result.error !== undefined).length;
    if (refused === 0) return EXIT.ok;
    if (!out.json) out.problem(`${refused} of ${results.length} starts refused`);
    return EXIT.refused;
  },
};

/** A list, or `{workflows: [...]}`; an item with `steps` is a definition, anything else a start request. */
function itemsOf(document: unknown, file: string): StartRequest[] {
  const list = Array.isArray(document) ? document : (document as { workflows?: unknown } | null)?.workflows;
  if (!Array.isArray(list)) throw new UsageError(`${file} must hold a list of workflows (or {workflows: [...]})`, usageLine(startBatch));
  return list.map((item) => (typeof item === "object" && item !== null && "steps" in item ? { definition: item } : item) as StartRequest);
}

function resultLine(result: StartBatchResult): string {
  if (result.error !== undefined) return `${result.index}: ${result.status} ${result.error.code}: ${result.error.message}`;
  const workflow = result.workflow;
  return `${result.index}: ${result.status === 201 ? "started" : "already started"} ${workflow?.id ?? ""}${workflow ? ` (${workflow.name}): ${workflow.status}` : ""}`;
}
