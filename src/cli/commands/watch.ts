import { TERMINAL_WORKFLOW_STATUSES } from "../../domain/contract";
import type { WorkflowView } from "../api-types";
import type { Command, CommandContext } from "../command";
import { EXIT } from "../failures";
import type { Terminal } from "../output";
import { changeLines, frameLines } from "../watch/frame";

/** The service pushes nothing to clients, so the CLI asks; once a second is live enough for a person. */
const POLL_INTERVAL_MS = 1_000;
const DEFAULT_COLUMNS = 100;

export const watch: Command = {
  name: "watch",
  summary: "follow a workflow live until it ends: its steps and a progress bar",
  args: ["<id>"],
  notes: [
    "On a terminal the view is redrawn in place; into a pipe it prints one line per change. With --json it prints the final workflow.",
    "Exits 0 when the workflow ends completed, 4 when it ends failed, compensated, cancelled or terminated.",
    "Ctrl-C stops watching; the workflow goes on.",
  ],
  run: (context) => watchWorkflow(context, context.args[0] ?? ""),
};

/** Polls the workflow until it ends, showing each poll; resolves to watch's exit status. */
export async function watchWorkflow(context: CommandContext, id: string): Promise<number> {
  const show = context.out.json ? () => {} : viewer(context.out.stdout);
  let previous: WorkflowView | undefined;
  for (;;) {
    const workflow = await context.client.get(id);
    show(previous, workflow);
    if (TERMINAL_WORKFLOW_STATUSES.includes(workflow.status)) return finish(context, workflow);
    previous = workflow;
    await context.sleep(POLL_INTERVAL_MS);
  }
}

type Show = (previous: WorkflowView | undefined, current: WorkflowView) => void;

/** A terminal gets the frame redrawn in place; anything else the lines of what changed. */
function viewer(stdout: Terminal): Show {
  if (!stdout.isTTY) {
    return (previous, current) => {
      const lines = changeLines(previous, current, Date.now());
      if (lines.length > 0) stdout.write(`${lines.join("\n")}\n`);
    };
  }
  let drawn = 0;
  return (_previous, current) => {
    // A pseudo-terminal may report 0 columns.
    const lines = frameLines(current, Date.now(), stdout.columns || DEFAULT_COLUMNS);
    // Back to the first line of the previous frame and clear below it: lines are clipped, so none wrapped.
    const rewind = drawn > 0 ? `\x1b[${drawn}F\x1b[0J` : "";
    stdout.write(`${rewind}${lines.join("\n")}\n`);
    drawn = lines.length;
  };
}

/** With --json the final view says how it ended (its status); for a person stderr says it too. */
function finish(context: CommandContext, workflow: WorkflowView): number {
  if (context.out.json) context.out.result(workflow, () => []);
  if (workflow.status === "completed") return EXIT.ok;
  if (!context.out.json) context.out.problem(`workflow ${workflow.id} ended ${workflow.status}${workflow.error ? `: ${workflow.error.message}` : ""}`);
  return EXIT.workflowUnsuccessful;
}
