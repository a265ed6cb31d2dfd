// `shepherd worker`'s handler: one run of the user's command per task. The task's input is its stdin and the task's
// identity its environment; what it prints on stdout is the output, and a non-zero exit fails the attempt with the
// end of what it printed on stderr.
import { spawn, type ChildProcess } from "node:child_process";
import type { WorkerTask } from "../../client/index";

/** How much of a failed command's stderr becomes the failure's message (the API takes at most 4 096 characters). */
const STDERR_TAIL_BYTES = 1024;
/** Well past the API's bound on an output, which refuses it anyway; past this the command's stdout is not kept. */
const MAX_STDOUT_BYTES = 1024 * 1024;
/** After SIGTERM, how long a command has to exit before SIGKILL. */
const KILL_GRACE_MS = 5_000;

export interface TaskCommand {
  command: string;
  args: string[];
  env: NodeJS.ProcessEnv;
}

/** A failure of the command, as the worker loop reads it: `retryable: false` fails the attempt for good. */
class CommandFailed extends Error {
  constructor(
    message: string,
    readonly retryable = true,
  ) {
    super(message);
  }
}

/** Runs the command for the task; resolves to its output, rejects with a CommandFailed. `signal` kills it. */
export function runTaskCommand(spec: TaskCommand, task: WorkerTask, signal: AbortSignal): Promise<unknown> {
  // Its own process group: Ctrl-C at a terminal signals the worker's group, and a graceful stop lets commands finish.
  const child = spawn(spec.command, spec.args, { env: { ...spec.env, ...taskEnv(task) }, stdio: ["pipe", "pipe", "pipe"], detached: true });
  const stdout = collectStdout(child);
  const stderr = collectTail(child);
  // A command that does not read its stdin closes it: that is its business, not a failure.
  child.stdin?.on("error", () => undefined);
  child.stdin?.end(`${JSON.stringify(task.input ?? null)}\n`);
  const stopKilling = killOnAbort(child, signal);
  return new Promise((resolve, reject) => {
    child.once("error", (error) => {
      stopKilling();
      reject(new CommandFailed(`could not run ${spec.command}: ${error.message}`));
    });
    child.once("close", (code, killedBy) => {
      stopKilling();
      if (code !== 0) return reject(new CommandFailed(stderr.text() || `${spec.command} ${code === null ? `was killed by ${killedBy}` : `exited with status ${code}`}`));
      if (stdout.overflowed()) return reject(new CommandFailed(`${spec.command} printed more than ${MAX_STDOUT_BYTES} bytes on stdout`, false));
      resolve(outputOf(stdout.text()));
    });
  });
}

/** What the command knows of its task, beside the input. */
function taskEnv(task: WorkerTask): Record<string, string> {
  return {
    SHEPHERD_TASK_TOKEN: task.token,
    SHEPHERD_WORKFLOW_ID: task.workflowId,
    SHEPHERD_STEP_ID: task.stepId,
    SHEPHERD_ATTEMPT: String(task.attempt),
    SHEPHERD_IDEMPOTENCY_KEY: task.idempotencyKey,
    SHEPHERD_TASK_KIND: task.kind,
    ...(task.index === undefined ? {} : { SHEPHERD_ITEM_INDEX: String(task.index) }),
  };
}

/** JSON is the output as it is; any other text is kept as `{"text": ...}`; nothing printed is no output. */
export function outputOf(stdout: string): unknown {
  const text = stdout.trim();
  if (text === "") return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return { text };
  }
}

function collectStdout(child: ChildProcess) {
  const chunks: Buffer[] = [];
  let size = 0;
  child.stdout?.on("data", (chunk: Buffer) => {
    size += chunk.length;
    if (size <= MAX_STDOUT_BYTES) chunks.push(chunk);
  });
  return { text: () => Buffer.concat(chunks).toString("utf8"), overflowed: () => size > MAX_STDOUT_BYTES };
}

/** The last STDERR_TAIL_BYTES of stderr, where a failing program says why. */
function collectTail(child: ChildProcess) {
  let tail = Buffer.alloc(0);
  child.stderr?.on("data", (chunk: Buffer) => {
    tail = Buffer.concat([tail, chunk]).subarray(-STDERR_TAIL_BYTES);
  });
  // The cut may fall inside a character: its remains decode to U+FFFD, dropped.
  return { text: () => tail.toString("utf8").replace(/^\uFFFD+/, "").trim() };
}

/** SIGTERM to the command's group when `signal` aborts, SIGKILL if it is still there after the grace. */
function killOnAbort(child: ChildProcess, signal: AbortSignal): () => void {
  let grace: ReturnType<typeof setTimeout> | undefined;
  const kill = () => {
    signalGroup(child, "SIGTERM");
    grace = setTimeout(() => signalGroup(child, "SIGKILL"), KILL_GRACE_MS);
  };
  if (signal.aborted) kill();
  else signal.addEventListener("abort", kill, { once: true });
  return () => {
    signal.removeEventListener("abort", kill);
    clearTimeout(grace);
  };
}

function signalGroup(child: ChildProcess, name: NodeJS.Signals): void {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  try {
    // A negative pid is the process group: the command's own children go too.
    process.kill(-child.pid, name);
  } catch {
    child.kill(name);
  }
}
