/** Where the CLI writes: process.stdout/stderr in use, anything with `write` in a test. */
export interface Terminal {
  write(text: string): unknown;
  /** True when a person is looking: `watch` redraws in place only then. */
  isTTY?: boolean;
  columns?: number;
}

/**
 * Text for people, JSON for scripts: a command hands its result and how to show it to a person, and --json decides.
 * In JSON mode stdout carries exactly one JSON document per command (the API's own body), nothing else.
 */
export class Output {
  constructor(
    readonly stdout: Terminal,
    readonly stderr: Terminal,
    readonly json: boolean,
  ) {}

  /** The command's result: as JSON, or as the lines `human` makes of it. */
  result<T>(value: T, human: (value: T) => string[]): void {
    if (this.json) {
      this.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
      return;
    }
    const lines = human(value);
    if (lines.length > 0) this.stdout.write(`${lines.join("\n")}\n`);
  }

  /** A message on stderr, in either mode. */
  problem(text: string): void {
    this.stderr.write(`${text}\n`);
  }
}
