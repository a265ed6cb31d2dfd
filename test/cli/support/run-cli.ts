// `shepherd …` as a person or a script runs it: bin/shepherd.mjs in its own Node process, stdout not a terminal.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { REPO } from "./service";

export interface CliRun {
  status: number | null;
  stdout: string;
  stderr: string;
  /** stdout parsed as JSON (for --json runs); throws with the output when it is not. */
  json(): any;
}

/** A run of the CLI; SHEPHERD_URL and SHEPHERD_TOKEN come from `env` (the tests' service unless overridden). */
export function runCli(args: string[], env: Record<string, string | undefined>): Promise<CliRun> {
  return spawnCli(args, env).finished;
}

/** The CLI started, for a test that signals it while it runs (`shepherd worker`): the process, and its run once it ends. */
export function spawnCli(args: string[], env: Record<string, string | undefined>): { child: ChildProcess; stderr: () => string; finished: Promise<CliRun> } {
  const child = spawn(process.execPath, [join(REPO, "bin", "shepherd.mjs"), ...args], {
    cwd: REPO,
    env: { ...process.env, SHEPHERD_URL: undefined, SHEPHERD_TOKEN: undefined, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
  child.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
  const finished = new Promise<CliRun>((resolve, reject) => {
    child.once("error", reject);
    child.once("close", (status) =>
      resolve({
        status,
        stdout,
        stderr,
        json() {
          try {
            return JSON.parse(stdout);
          } catch {
            throw new Error(`shepherd ${args.join(" ")} printed no JSON (exit ${status}):\n${stdout}\n${stderr}`);
          }
        },
      }),
    );
  });
  return { child, stderr: () => stderr, finished };
}

/** Stops `shepherd worker` at once: a first SIGINT (graceful: it would wait for its poll in flight), then a second. */
export async function stopWorkerNow(run: { child: ChildProcess; stderr: () => string; finished: Promise<CliRun> }): Promise<CliRun> {
  run.child.kill("SIGINT");
  for (let waited = 0; !run.stderr().includes("stopping:") && run.child.exitCode === null && waited < 5_000; waited += 20) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  run.child.kill("SIGINT");
  return run.finished;
}

/** A scratch folder holding the definition and schedule files the tests start from: `path(name)`, then `remove()`. */
export function scratchFiles(files: Record<string, string>): { path: (name: string) => string; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), "shepherd-cli-files-"));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return { path: (name) => join(dir, name), remove: () => rmSync(dir, { recursive: true, force: true }) };
}
