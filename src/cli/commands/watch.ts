import { TERMINAL_WORKFLOW_STATUSES } from "../../domain/contract";
import type { WorkflowView } from "../api-types";
import { stringFlag, usageLine, type Command, type CommandContext } from "../command";
import { EXIT } from "../failures";
import { durationMs } from "../flag-values";
import { duration } from "../format";
import type { Terminal } from "../output";
import { changeLines, frameLines } from "../watch/frame";
import { nextStepLines, waitsForOperator } from "../watch/next-steps";

/** The service pushes nothing to clients, so the CLI asks; once a second is live enough for a person. */
const POLL_INTERVAL_MS = 1_000;
const DEFAULT_COLUMNS = 100;

export const watch: Command = {
  name: "watch",
  summary: "follow a workflow live until it ends: its steps and a progress bar",
  args: ["<id>"],
  flags: {
    timeout: { type: "string", value: "<duration>", description: "stop watching after this long (90s, 10m, 2h) if it has not ended: exit 5" },
  },
  notes: [
    "On a terminal the view is redrawn in place; into a pipe it prints one line per change. With --json it prints the final workflow.",
    "On a terminal a workflow that needs an operator (needs_attention) or is paused is watched on, with the commands that move it on;",
    "into a pipe, or with --json, watch stops there instead of waiting for a person (exit 5; stderr names those commands, --json prints the workflow).",
    "Exits 0 when the workflow ends completed, 4 when it ends failed, compensated, cancelled or terminated, 5 when it stopped first.",
    "Ctrl-C stops watching; the workflow goes on.",
  ],
  run: (context) => watchWorkflow(context, context.args[0] ?? "", timeoutOf(context)),
};

function timeoutOf(context: CommandContext): number | undefined {
  const text = stringFlag(context.flags, "timeout");
  return text === undefined ? undefined : durationMs("timeout", text, usageLine(watch));
}

/**
 * Polls the workflow until it ends, showing each poll; resolves to watch's exit status. Like `kubectl wait`, it stops
 * at `timeoutMs`; and a script (no terminal, or --json) is not kept waiting on a workflow only a person can move on.
 */
export async function watchWorkflow(context: CommandContext, id: string, timeoutMs?: number): Promise<number> {
  const show = context.out.json ? () => {} : viewer(context.out.stdout);
  const unattended = context.out.json || !context.out.stdout.isTTY;
  const giveUpAt = timeoutMs === undefined ? Infinity : Date.now() + timeoutMs;
  let previous: WorkflowView | undefined;
  for (;;) {
    const workflow = await context.client.get(id);
    show(previous, workflow);
    if (TERMINAL_WORKFLOW_STATUSES.includes(workflow.status)) return finish(context, workflow);
    if (unattended && waitsForOperator(workflow)) return stop(context, workflow, nextStepLines(workflow));
    if (Date.now() >= giveUpAt) return stop(context, workflow, [`still ${workflow.status} after ${duration(timeoutMs ?? 0)}`]);
    previous = workflow;
    await context.sleep(Math.min(POLL_INTERVAL_MS, Math.max(0, giveUpAt - Date.now())));
  }
}

/** Watching ends before the workflow does: with --json the view as it is (its status says why), else stderr says why and what to run. */
function stop(context: CommandContext, workflow: WorkflowView, why: string[]): number {
  if (context.out.json) {
    context.out.result(workflow, () => []);
    return EXIT.watchStopped;
  }
  context.out.problem([`workflow ${workflow.id} ${why[0] ?? workflow.status}`, ...why.slice(1)].join("\n"));
  return EXIT.watchStopped;
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
