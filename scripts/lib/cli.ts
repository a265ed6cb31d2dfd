// Command lines of the tools: flags read by node:util's parseArgs (strict: an unknown flag is an error),
// values checked with one wording, and one way to answer --help and a bad flag. Each tool keeps its own
// flags, defaults and presets; this module only reads and checks them.
import { parseArgs } from "node:util";
import type { ParseArgsOptionsConfig } from "node:util";

/** The flag names of a tool, by kind. */
export interface FlagNames<V extends string, S extends string, R extends string> {
  /** Take a value (checked by the tool, so a bad number names its flag). */
  values?: readonly V[];
  /** Take none. */
  switches?: readonly S[];
  /** Take a value each time they appear. */
  repeatable?: readonly R[];
}

/** parseArgs options for those names, typed so that parseArgs types each flag's value. */
export type FlagSpec<V extends string, S extends string, R extends string> = { [K in V]: { type: "string" } } & {
  [K in R]: { type: "string"; multiple: true };
} & { [K in S]: { type: "boolean" } } & { help: { type: "boolean"; short: "h" } };

/** parseArgs options from flag names. `-h` is --help. */
export function flagSpec<const V extends string = never, const S extends string = never, const R extends string = never>({
  values = [],
  switches = [],
  repeatable = [],
}: FlagNames<V, S, R>): FlagSpec<V, S, R> {
  const spec: ParseArgsOptionsConfig = {
    ...Object.fromEntries(values.map((name) => [name, { type: "string" }])),
    ...Object.fromEntries(repeatable.map((name) => [name, { type: "string", multiple: true }])),
    ...Object.fromEntries(switches.map((name) => [name, { type: "boolean" }])),
    help: { type: "boolean", short: "h" },
  };
  // Object.fromEntries forgets the names; they are exactly the ones given.
  return spec as FlagSpec<V, S, R>;
}

/** The error parseArgs throws, with its code. */
const isNodeError = (error: unknown): error is Error & { code?: string } => error instanceof Error;

/**
 * Reads argv against a flagSpec: { values, tokens } as parseArgs gives them (tokens in command-line order,
 * for flags whose order matters). Throws with a short message for an unknown flag or a stray argument.
 */
export function readFlags<O extends ParseArgsOptionsConfig>(argv: string[], options: O) {
  try {
    return parseArgs({ args: argv, options, strict: true, allowPositionals: false, tokens: true });
  } catch (error) {
    if (!isNodeError(error)) throw error;
    const quoted = /'([^']+)'/.exec(error.message)?.[1] ?? "";
    if (error.code === "ERR_PARSE_ARGS_UNKNOWN_OPTION") throw new Error(`unknown flag ${quoted}`.trim(), { cause: error });
    if (error.code === "ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL") throw new Error(`unexpected argument ${quoted}`.trim(), { cause: error });
    throw error;
  }
}

/** An integer flag value ≥ min. */
export function integer(text: string, flag: string, min = 1): number {
  const value = Number(text);
  if (!Number.isInteger(value) || value < min) throw new Error(`${flag} must be an integer ≥ ${min} (got ${text})`);
  return value;
}

/** A comma-separated flag value, blanks dropped. */
export const list = (text: string): string[] => text.split(",").map((item) => item.trim()).filter(Boolean);

/** A flag value that must be one of `choices`. */
export function oneOf<const C extends string>(text: string, flag: string, choices: readonly C[]): C {
  if (!(choices as readonly string[]).includes(text)) throw new Error(`${flag} must be one of ${choices.join(", ")} (got ${text})`);
  return text as C;
}

export interface CommandLineTool<O extends { help?: boolean }> {
  tool: string;
  usage: string;
  /** Reads argv into the tool's options; throws with a short message for a bad flag. */
  parse: (argv: string[]) => O;
}

/** The options to run with, or the exit status of a tool that is done. */
export type CommandLine<O> = { options: O; exitCode?: undefined } | { options?: undefined; exitCode: number };

/**
 * The command line read by `parse(argv)`: { options } to run with, or { exitCode } when the tool is done:
 * 0 after printing the usage for --help, 2 after printing the error and the usage for a bad flag (the
 * usage-error status of shell builtins; both tools now agree on it, the bench used to exit 1 with a stack).
 */
export function readCommandLine<O extends { help?: boolean }>(argv: string[], { tool, usage, parse }: CommandLineTool<O>): CommandLine<O> {
  let options: O;
  try {
    options = parse(argv);
  } catch (error) {
    console.error(`${tool}: ${error instanceof Error ? error.message : String(error)}\n\n${usage}`);
    return { exitCode: 2 };
  }
  if (options.help) {
    console.log(usage);
    return { exitCode: 0 };
  }
  return { options };
}
