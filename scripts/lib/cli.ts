// Command lines of the tools: flags read by node:util's parseArgs (strict: an unknown flag is an error),
// values checked with one wording, and one way to answer --help and a bad flag. Each tool keeps its own
// flags, defaults and presets; this module only reads and checks them.
import { parseArgs } from "node:util";

/**
 * parseArgs options from flag names: `values` take a value (checked by the tool, so a bad number names its
 * flag), `switches` take none, `repeatable` take a value each time they appear. `-h` is --help.
 */
export function flagSpec({ values = [], switches = [], repeatable = [] }) {
  return {
    ...Object.fromEntries(values.map((name) => [name, { type: "string" }])),
    ...Object.fromEntries(repeatable.map((name) => [name, { type: "string", multiple: true }])),
    ...Object.fromEntries(switches.map((name) => [name, { type: "boolean" }])),
    help: { type: "boolean", short: "h" },
  };
}

/**
 * Reads argv against a flagSpec: { values, tokens } as parseArgs gives them (tokens in command-line order,
 * for flags whose order matters). Throws with a short message for an unknown flag or a stray argument.
 */
export function readFlags(argv, options) {
  try {
    return parseArgs({ args: argv, options, strict: true, allowPositionals: false, tokens: true });
  } catch (error) {
    const quoted = /'([^']+)'/.exec(error.message)?.[1] ?? "";
    if (error.code === "ERR_PARSE_ARGS_UNKNOWN_OPTION") throw new Error(`unknown flag ${quoted}`.trim(), { cause: error });
    if (error.code === "ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL") throw new Error(`unexpected argument ${quoted}`.trim(), { cause: error });
    throw error;
  }
}

/** An integer flag value ≥ min. */
export function integer(text, flag, min = 1) {
  const value = Number(text);
  if (!Number.isInteger(value) || value < min) throw new Error(`${flag} must be an integer ≥ ${min} (got ${text})`);
  return value;
}

/** A comma-separated flag value, blanks dropped. */
export const list = (text) => text.split(",").map((item) => item.trim()).filter(Boolean);

/** A flag value that must be one of `choices`. */
export function oneOf(text, flag, choices) {
  if (!choices.includes(text)) throw new Error(`${flag} must be one of ${choices.join(", ")} (got ${text})`);
  return text;
}

/**
 * The command line read by `parse(argv)`: { options } to run with, or { exitCode } when the tool is done:
 * 0 after printing the usage for --help, 2 after printing the error and the usage for a bad flag (the
 * usage-error status of shell builtins; both tools now agree on it, the bench used to exit 1 with a stack).
 */
export function readCommandLine(argv, { tool, usage, parse }) {
  let options;
  try {
    options = parse(argv);
  } catch (error) {
    console.error(`${tool}: ${error.message}\n\n${usage}`);
    return { exitCode: 2 };
  }
  if (options.help) {
    console.log(usage);
    return { exitCode: 0 };
  }
  return { options };
}
