import { parseArgs, type ParseArgsConfig } from "node:util";
import { usageLine, type Command, type FlagSpec, type FlagValues } from "./command";
import { UsageError } from "./failures";

/** Flags every command takes, before or after its name. */
export const GLOBAL_FLAGS: Record<string, FlagSpec> = {
  url: { type: "string", value: "<url>", description: "the service, e.g. https://shepherd.example.com (or SHEPHERD_URL; default http://localhost:8787)" },
  token: { type: "string", value: "<token>", description: "an API token; it decides the tenant (or SHEPHERD_TOKEN)" },
  json: { type: "boolean", description: "print the API's JSON instead of text, for scripts (the API's errors as JSON on stderr)" },
  help: { type: "boolean", description: "show help (for a command: shepherd <command> --help)" },
};

export const GENERAL_USAGE = "shepherd <command> [arguments] [flags]   (shepherd --help lists the commands)";

export type Invocation = { kind: "help"; command?: Command } | { kind: "run"; command: Command; args: string[]; flags: FlagValues; rest: string[] };

/**
 * Reads argv: the command's name comes first (global flags may come before it), then its arguments and flags in any
 * order. Throws a UsageError naming what is wrong, with the usage line of the command when there is one.
 */
export function parseCommandLine(argv: string[], commands: Command[]): Invocation {
  const located = locateCommand(argv, commands);
  if (located.command === undefined) {
    if (located.rest.some((token) => token === "--help" || token === "-h")) return { kind: "help" };
    throw new UsageError("no command given", GENERAL_USAGE);
  }
  const { command, rest } = located;
  if (command.name === "help") return helpFor(rest, commands);
  const { ours, theirs } = splitAtDoubleDash(rest, command);
  const { values, positionals } = readFlags(ours, command);
  if (values.help === true) return { kind: "help", command };
  checkArgumentCount(command, positionals);
  checkRequired(command, values, theirs);
  return { kind: "run", command, args: positionals, flags: values, rest: theirs };
}

/** For a command with `rest`, what follows the first `--` is another program's command line, not ours to read. */
function splitAtDoubleDash(tokens: string[], command: Command): { ours: string[]; theirs: string[] } {
  const at = tokens.indexOf("--");
  if (command.rest === undefined || at < 0) return { ours: tokens, theirs: [] };
  return { ours: tokens.slice(0, at), theirs: tokens.slice(at + 1) };
}

/** The command named in argv and the tokens left once its name is taken out. */
function locateCommand(argv: string[], commands: Command[]): { command?: Command; rest: string[] } {
  const byName = new Map(commands.map((command) => [command.name, command]));
  for (let index = 0; index < argv.length; index += 1) {
    const token = argv[index] ?? "";
    if (token === "--url" || token === "--token") {
      index += 1;
      continue;
    }
    if (token.startsWith("-")) {
      if (isGlobalFlag(token)) continue;
      throw new UsageError(`unknown flag ${token.split("=")[0]} (a command's own flags go after its name)`, GENERAL_USAGE);
    }
    const next = argv[index + 1];
    const grouped = next === undefined ? undefined : byName.get(`${token} ${next}`);
    const command = grouped ?? byName.get(token);
    if (command === undefined) throw new UsageError(`unknown command "${token}"${suggestion(token, commands)}`, GENERAL_USAGE);
    const taken = grouped ? 2 : 1;
    return { command, rest: [...argv.slice(0, index), ...argv.slice(index + taken)] };
  }
  return { rest: argv };
}

/** `retry` for `retry-step`: the commands whose name begins with the word typed. */
function suggestion(token: string, commands: Command[]): string {
  const names = token.length < 3 ? [] : commands.map((command) => command.name).filter((name) => name !== token && name.startsWith(token));
  return names.length === 0 ? "" : ` (did you mean ${names.join(" or ")}?)`;
}

function isGlobalFlag(token: string): boolean {
  return ["--json", "--help", "-h"].includes(token) || token.startsWith("--url=") || token.startsWith("--token=");
}

/** `shepherd help [command]`. */
function helpFor(rest: string[], commands: Command[]): Invocation {
  const words = rest.filter((token) => !token.startsWith("-"));
  if (words.length === 0) return { kind: "help" };
  const name = words.join(" ");
  const command = commands.find((candidate) => candidate.name === name);
  if (command === undefined) throw new UsageError(`unknown command "${name}"`, GENERAL_USAGE);
  return { kind: "help", command };
}

function readFlags(tokens: string[], command: Command): { values: FlagValues; positionals: string[] } {
  const specs = { ...GLOBAL_FLAGS, ...command.flags };
  const options: ParseArgsConfig["options"] = Object.fromEntries(
    Object.entries(specs).map(([name, spec]) => [name, { type: spec.type, ...(name === "help" ? { short: "h" } : {}) }]),
  );
  try {
    const { values, positionals } = parseArgs({ args: tokens, options, strict: true, allowPositionals: true });
    return { values: values as FlagValues, positionals };
  } catch (error) {
    throw new UsageError(flagProblem(error), usageLine(command));
  }
}

/** parseArgs' messages are long and mention its own API; ours name the flag. */
function flagProblem(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const code = (error as { code?: string }).code;
  const flag = /'(-[^' ]+)/.exec(message)?.[1] ?? "";
  if (code === "ERR_PARSE_ARGS_UNKNOWN_OPTION") return `unknown flag ${flag}`;
  if (code === "ERR_PARSE_ARGS_INVALID_OPTION_VALUE") {
    return message.includes("does not take an argument") ? `${flag} takes no value` : `${flag} needs a value`;
  }
  return message;
}

function checkRequired(command: Command, values: FlagValues, rest: string[]): void {
  for (const [name, spec] of Object.entries(command.flags ?? {})) {
    if (spec.required && values[name] === undefined) throw new UsageError(`missing --${name}${spec.value ? ` ${spec.value}` : ""}`, usageLine(command));
  }
  if (command.rest !== undefined && rest.length === 0) throw new UsageError(`missing "-- ${command.rest}"`, usageLine(command));
}

function checkArgumentCount(command: Command, positionals: string[]): void {
  const required = command.args.filter((arg) => !arg.endsWith("?"));
  if (positionals.length < required.length) {
    throw new UsageError(`missing ${required[positionals.length]}`, usageLine(command));
  }
  if (positionals.length > command.args.length) {
    throw new UsageError(`unexpected argument "${positionals[command.args.length]}"`, usageLine(command));
  }
}
