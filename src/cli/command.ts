import type { ShepherdClient } from "../client/index";
import type { Output } from "./output";

/** A flag of one command: `--name value` (string) or `--name` (boolean). */
export interface FlagSpec {
  type: "string" | "boolean";
  /** What `--name <value>` stands for in help, e.g. "<status>". */
  value?: string;
  description: string;
}

export type FlagValues = Record<string, string | boolean | undefined>;

/** What a command runs with: the typed client, where to print, and its own arguments. */
export interface CommandContext {
  client: ShepherdClient;
  out: Output;
  /** Positional arguments, in the order of `Command.args`. */
  args: string[];
  flags: FlagValues;
  /** How `watch` waits between its polls. */
  sleep: (ms: number) => Promise<void>;
}

export interface Command {
  /** "get", or "<group> <action>" such as "definitions put". */
  name: string;
  summary: string;
  /** Positional arguments by name; "<name>?" marks an optional one (only last ones may be). */
  args: string[];
  flags?: Record<string, FlagSpec>;
  /** Lines of help after the flags: what the command prints, an example. */
  notes?: string[];
  /** Resolves to the exit status: 0 unless the command says otherwise (watch). */
  run(context: CommandContext): Promise<number | void>;
}

/** `shepherd get <id> [--json]`: the usage line help and usage errors print. */
export function usageLine(command: Command): string {
  const flags = Object.entries(command.flags ?? {}).map(([name, spec]) => `[--${name}${spec.type === "string" ? ` ${spec.value ?? "<value>"}` : ""}]`);
  return ["shepherd", commandWithArgs(command), ...flags].join(" ");
}

/** `start [<file>]`: the name and the arguments, optional ones in brackets. */
export function commandWithArgs(command: Command): string {
  return [command.name, ...command.args.map((arg) => (arg.endsWith("?") ? `[${arg.slice(0, -1)}]` : arg))].join(" ");
}

/** A string flag's value, or undefined. */
export function stringFlag(flags: FlagValues, name: string): string | undefined {
  const value = flags[name];
  return typeof value === "string" ? value : undefined;
}
