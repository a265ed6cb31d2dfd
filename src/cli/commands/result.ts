import type { WorkflowResult } from "../../client/index";
import { TERMINAL_WORKFLOW_STATUSES } from "../../domain/contract";
import type { Command, CommandContext } from "../command";
import { EXIT } from "../failures";

/** The longest wait the service takes per request: the command asks again, as long as it takes. */
const LONG_POLL_MS = 60_000;

export const result: Command = {
  name: "result",
  summary: "wait until a workflow ends and print its output: the service answers when it ends (a long poll, no polling)",
  args: ["<id>"],
  notes: [
    "Prints the output as JSON when the workflow completes; with --json the API's answer, {id, status, output?, error?}.",
    "Exits 0 when the workflow ends completed, 4 when it ends failed, compensated, cancelled or terminated (stderr says which, with the error).",
    "Ctrl-C stops waiting; the workflow goes on.",
  ],
  run: (context) => awaitResult(context, context.args[0] ?? ""),
};

/** Long polls until the workflow has ended; resolves to the exit status, as watch's. */
export async function awaitResult(context: CommandContext, id: string): Promise<number> {
  for (;;) {
    const answer = await context.client.result(id, { waitMs: LONG_POLL_MS });
    if (TERMINAL_WORKFLOW_STATUSES.includes(answer.status)) return finish(context, answer);
  }
}

function finish(context: CommandContext, answer: WorkflowResult): number {
  const completed = answer.status === "completed";
  context.out.result(answer, (ended) => (completed ? [JSON.stringify("output" in ended ? (ended.output ?? null) : null)] : []));
  if (completed) return EXIT.ok;
  if (!context.out.json) context.out.problem(`workflow ${answer.id} ended ${answer.status}${"error" in answer && answer.error ? `: ${answer.error.message}` : ""}`);
  return EXIT.workflowUnsuccessful;
}
