import { describe, expect, it } from "vitest";
import { GLOBAL_FLAGS, parseCommandLine } from "../../src/cli/args";
import { COMMANDS } from "../../src/cli/commands/index";

const parse = (...argv: string[]) => parseCommandLine(argv, COMMANDS);

describe("reading the command line", () => {
  it("takes global flags before or after the command, and its own flags anywhere after its name", () => {
    const invocation = parse("--url", "http://shepherd.test", "list", "--status", "failed", "--json");
    expect(invocation).toMatchObject({ kind: "run", command: { name: "list" }, args: [], flags: { url: "http://shepherd.test", status: "failed", json: true } });
  });

  it("names the commands an unknown one begins, so `retry` leads to retry-step", () => {
    expect(() => parse("retry", "order-1", "charge")).toThrow('unknown command "retry" (did you mean retry-step?)');
    expect(() => parse("launch")).toThrow(/^unknown command "launch"$/);
  });

  it("gives no command a flag of its own that would hide a global one (--url, --token, --json, --help)", () => {
    const shadowing = COMMANDS.flatMap((command) => Object.keys(command.flags ?? {}).filter((flag) => flag in GLOBAL_FLAGS).map((flag) => `${command.name} --${flag}`));
    expect(shadowing).toEqual([]);
  });

  it("finds a group's action by its two words, and the group alone as its list", () => {
    expect(parse("schedules", "trigger", "nightly")).toMatchObject({ command: { name: "schedules trigger" }, args: ["nightly"] });
    expect(parse("definitions", "--json")).toMatchObject({ command: { name: "definitions" }, args: [] });
  });

  it("answers help for --help, -h and help <command>", () => {
    expect(parse("--help")).toEqual({ kind: "help" });
    expect(parse("get", "-h")).toMatchObject({ kind: "help", command: { name: "get" } });
    expect(parse("help", "definitions", "put")).toMatchObject({ kind: "help", command: { name: "definitions put" } });
  });

  it("leaves what follows -- to the command a worker runs, its flags included", () => {
    const invocation = parse("worker", "--pool", "gpu", "--json", "--", "convert", "--json", "-resize", "50%");
    expect(invocation).toMatchObject({ kind: "run", command: { name: "worker" }, flags: { pool: "gpu", json: true }, rest: ["convert", "--json", "-resize", "50%"] });
    expect(parse("worker", "--pool", "gpu", "--", "convert", "--help")).toMatchObject({ kind: "run", rest: ["convert", "--help"] });
  });

  it.each([
    [["worker", "--", "convert"], "missing --pool <pool>", "shepherd worker --pool <pool> [--concurrency <n>] [--worker-id <id>] -- <command> [<args>...]"],
    [["worker", "--pool", "gpu"], 'missing "-- <command> [<args>...]"', "shepherd worker --pool <pool>"],
    [["worker", "--pool", "gpu", "convert", "--"], 'unexpected argument "convert"', "shepherd worker --pool <pool>"],
    [["get"], "missing <id>", "shepherd get <id>"],
    [["get", "a", "b"], 'unexpected argument "b"', "shepherd get <id>"],
    [["get", "a", "--url"], "--url needs a value", "shepherd get <id>"],
    [["list", "--json=yes"], "--json takes no value", "shepherd list [--status <status>]"],
    [["--status", "x", "list"], "unknown flag --status (a command's own flags go after its name)", "shepherd <command>"],
    [["launch"], 'unknown command "launch"', "shepherd <command>"],
    [[], "no command given", "shepherd <command>"],
  ])("refuses %j: %s", (argv, message, usage) => {
    expect(() => parse(...argv)).toThrow(message);
    try {
      parse(...argv);
    } catch (error) {
      expect((error as { usage?: string }).usage).toContain(usage);
    }
  });
});
