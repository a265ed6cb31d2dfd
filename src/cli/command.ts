import type { ShepherdClient } from "../client/index";
import type { Output } from "./output";

/** A flag of one command: `--name value` (string) or `--name` (boolean). */
export interface FlagSpec {
  type: "string" | "boolean";
  /** What `--name <value>` stands for in help, e.g. "<status>". */
  value?: string;
  description: string;
  /** A flag the command cannot run without: shown without brackets, and its absence is a usage error. */
  required?: boolean;
}

export type FlagValues = Record<string, string | boolean | undefined>;

/** What a command runs with: the typed client, where to print, and its own arguments. */
export interface CommandContext {
  client: ShepherdClient;
  out: Output;
  /** Positional arguments, in the order of `Command.args`. */
  args: string[];
  flags: FlagValues;
  /** The tokens after `--`, as given, for a command with `rest`. */
  rest: string[];
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
  /**
   * What follows `--`, e.g. "<command> [<args>...]": tokens the command takes as they are, never read as flags (they are
   * another program's). Required when set.
   */
  rest?: string;
  /** Lines of help after the flags: what the command prints, an example. */
  notes?: string[];
  /** Resolves to the exit status: 0 unless the command says otherwise (watch). */
  run(context: CommandContext): Promise<number | void>;
}

/** `shepherd get <id> [--json]`: the usage line help and usage errors print. */
export function usageLine(command: Command): string {
  const flags = Object.entries(command.flags ?? {}).map(([name, spec]) => (spec.required ? flagWithValue(name, spec) : `[${flagWithValue(name, spec)}]`));
  return ["shepherd", argsOf(command), ...flags, ...restOf(command)].join(" ");
}

/** `start [<file>]`: the name and the arguments, optional ones in brackets, the required flags, then what goes after `--`. */
export function commandWithArgs(command: Command): string {
  const required = Object.entries(command.flags ?? {}).filter(([, spec]) => spec.required);
  return [argsOf(command), ...required.map(([name, spec]) => flagWithValue(name, spec)), ...restOf(command)].join(" ");
}

function flagWithValue(name: string, spec: FlagSpec): string {
  return `--${name}${spec.type === "string" ? ` ${spec.value ?? "<value>"}` : ""}`;
}

function argsOf(command: Command): string {
  return [command.name, ...command.args.map((arg) => (arg.endsWith("?") ? `[${arg.slice(0, -1)}]` : arg))].join(" ");
}

function restOf(command: Command): string[] {
  return command.rest === undefined ? [] : ["--", command.rest];
}

/** A string flag's value, or undefined. */
export function stringFlag(flags: FlagValues, name: string): string | undefined {
  const value = flags[name];
  return typeof value === "string" ? value : undefined;
}
