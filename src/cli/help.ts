import { GENERAL_USAGE, GLOBAL_FLAGS } from "./args";
import { commandWithArgs, usageLine, type Command, type FlagSpec } from "./command";
import { table } from "./format";

/** The exit statuses as help and the README state them. */
const EXIT_STATUS_LINES = [
  "  0  done",
  "  1  the API refused the request (4xx): \"error: <code>: <message>\" on stderr (with --json, the API's error body)",
  "  2  usage error: unknown command or flag, missing argument, unreadable file; nothing was sent",
  "  3  the service could not be reached, or answered 5xx after the client's retries",
  "  4  watch (and start --watch) and result: the workflow ended failed, compensated, cancelled or terminated",
  "  5  watch: it stopped before the workflow ended, at --timeout, or (into a pipe or with --json) at a workflow that waits for an operator",
];

/** `shepherd --help`: every command by group, the global flags, the environment and the exit statuses. */
export function generalHelp(groups: { title: string; commands: Command[] }[]): string {
  const lines = ["shepherd: start, follow and operate Shepherd workflows from the command line", "", `usage: ${GENERAL_USAGE}`];
  for (const group of groups) {
    lines.push("", `${group.title}:`);
    const rows = group.commands.map((command) => [`  ${commandWithArgs(command)}`, command.summary]);
    lines.push(...table(["", ""], rows).slice(1));
  }
  lines.push("", "Flags of every command:", ...flagLines(GLOBAL_FLAGS));
  lines.push("", "Environment: SHEPHERD_URL and SHEPHERD_TOKEN, when --url and --token are not given.");
  lines.push("", "Exit status:", ...EXIT_STATUS_LINES, "", "shepherd <command> --help shows the command's own flags.");
  return lines.join("\n");
}

/** `shepherd <command> --help`. */
export function commandHelp(command: Command): string {
  const lines = [`usage: ${usageLine(command)}`, "", command.summary];
  if (command.flags && Object.keys(command.flags).length > 0) lines.push("", "Flags:", ...flagLines(command.flags));
  if (command.notes) lines.push("", ...command.notes);
  lines.push("", "Flags of every command: --url <url>, --token <token>, --json, --help (shepherd --help for the exit statuses).");
  return lines.join("\n");
}

function flagLines(flags: Record<string, FlagSpec>): string[] {
  const rows = Object.entries(flags).map(([name, spec]) => [`  ${name === "help" ? "-h, " : ""}--${name}${spec.type === "string" ? ` ${spec.value ?? "<value>"}` : ""}`, spec.description]);
  return table(["", ""], rows).slice(1);
}
