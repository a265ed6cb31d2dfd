import { parseCommandLine } from "./args";
import { usageLine } from "./command";
import { COMMAND_GROUPS, COMMANDS } from "./commands/index";
import { clientFor, connectionFrom } from "./connection";
import { describeFailure, EXIT } from "./failures";
import { commandHelp, generalHelp } from "./help";
import { Output, type Terminal } from "./output";

/** What the CLI runs with; process.* in use (entry.ts). */
export interface Io {
  argv: string[];
  env: Record<string, string | undefined>;
  stdout: Terminal;
  stderr: Terminal;
}

/** Runs one command line and resolves to its exit status; failures are printed here, in one place. */
export async function main(io: Io): Promise<number> {
  // For the catch below, which prints any failure in --json's form (usage errors stay text: they name flags).
  const dashes = io.argv.indexOf("--");
  const json = (dashes < 0 ? io.argv : io.argv.slice(0, dashes)).includes("--json");
  try {
    const invocation = parseCommandLine(io.argv, COMMANDS);
    if (invocation.kind === "help") {
      io.stdout.write(`${invocation.command ? commandHelp(invocation.command) : generalHelp(COMMAND_GROUPS)}\n`);
      return EXIT.ok;
    }
    const { command, args, flags, rest } = invocation;
    const connection = connectionFrom(flags, io.env, usageLine(command));
    const out = new Output(io.stdout, io.stderr, flags.json === true);
    const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
    return (await command.run({ client: clientFor(connection), out, args, flags, rest, sleep })) ?? EXIT.ok;
  } catch (error) {
    const { status, text } = describeFailure(error, json);
    io.stderr.write(`${text}\n`);
    return status;
  }
}
