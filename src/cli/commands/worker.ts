import { hostname } from "node:os";
import { stringFlag, usageLine, type Command, type CommandContext } from "../command";
import { EXIT } from "../failures";
import { duration } from "../format";
import { positiveInteger } from "../flag-values";
import { runTaskCommand } from "../worker/task-process";
import { logEvent, logNote } from "../worker/worker-log";

/** One poll's wait: under the CLI's 30 s per request, and what a graceful stop may wait for. */
const WAIT_MS = 20_000;

export const worker: Command = {
  name: "worker",
  summary: "do a pool's tasks: run a command once per task, its input on stdin, its stdout the output",
  args: [],
  rest: "<command> [<args>...]",
  flags: {
    pool: { type: "string", value: "<pool>", description: 'the pool whose tasks to do (a worker step\'s "pool")', required: true },
    concurrency: { type: "string", value: "<n>", description: "commands running at once (default 1)" },
    "worker-id": { type: "string", value: "<id>", description: "how this worker shows in GET /v1/pools (default <host>-<pid>)" },
  },
  notes: [
    "The command gets the task's input as JSON on stdin, and SHEPHERD_TASK_TOKEN, SHEPHERD_WORKFLOW_ID, SHEPHERD_STEP_ID,",
    "SHEPHERD_ATTEMPT, SHEPHERD_IDEMPOTENCY_KEY, SHEPHERD_TASK_KIND (and SHEPHERD_ITEM_INDEX for a map's item) in its environment.",
    'Its stdout, as JSON, is the step\'s output (other text is kept as {"text": ...}); a non-zero exit fails the attempt',
    "with the end of its stderr as the message, and the step's retry policy decides what comes next.",
    "The worker heartbeats while the command runs, and stops it (SIGTERM) when the attempt is cancelled or times out.",
    "Ctrl-C or SIGTERM stops polling: the poll in flight is answered (within 20 s) and the running commands finish and are",
    "reported, so no task is lost. A second Ctrl-C stops the commands, whose attempts fail and are retried.",
    "Each task and failed poll is a line on stderr (with --json, a JSON object a line). Example:",
    "  shepherd worker --pool thumbnails --concurrency 4 -- ./make-thumbnail.sh",
  ],
  run: (context) => runWorker(context),
};

/** Polls until Ctrl-C or SIGTERM, then waits for the running commands; exit 1 when the service refuses the poll. */
async function runWorker(context: CommandContext): Promise<number> {
  const { flags, out } = context;
  const pool = stringFlag(flags, "pool") ?? "";
  const concurrencyFlag = stringFlag(flags, "concurrency");
  const concurrency = concurrencyFlag === undefined ? 1 : positiveInteger("concurrency", concurrencyFlag, usageLine(worker));
  const workerId = stringFlag(flags, "worker-id") ?? `${hostname()}-${process.pid}`;
  const [command = "", ...args] = context.rest;
  const killCommands = new AbortController();
  const handle = context.client.worker({
    pool,
    concurrency,
    workerId,
    waitMs: WAIT_MS,
    handler: (task, { signal }) => runTaskCommand({ command, args, env: process.env }, task, AbortSignal.any([signal, killCommands.signal])),
    onEvent: (event) => logEvent(out, event),
  });
  logNote(out, `worker ${workerId} doing pool "${pool}" tasks, ${concurrency} at a time, with ${command}`, { workerId, pool, concurrency });
  const detach = onInterrupt(
    () => {
      logNote(out, `stopping: no new poll; waiting for the poll in flight (${duration(WAIT_MS)} at most) and the running commands (Ctrl-C again stops them)`);
      void handle.stop();
    },
    () => {
      logNote(out, "stopping now: the running commands are stopped and fail their attempts, which are retried");
      killCommands.abort();
      void handle.stop({ abandonPoll: true });
    },
  );
  try {
    await handle.done;
  } finally {
    detach();
  }
  logNote(out, "stopped");
  return EXIT.ok;
}

/** The first SIGINT or SIGTERM asks for a graceful stop, any later one for a hard one. */
function onInterrupt(graceful: () => void, hard: () => void): () => void {
  let count = 0;
  const listener = () => ((count += 1) === 1 ? graceful() : hard());
  process.on("SIGINT", listener);
  process.on("SIGTERM", listener);
  return () => {
    process.off("SIGINT", listener);
    process.off("SIGTERM", listener);
  };
}
