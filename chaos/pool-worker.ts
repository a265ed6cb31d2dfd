// One worker of the soak's pool phase (reliability cases 29 and 30), a child process lib/pool-workers.ts starts: it
// long-polls the pool and, for each task, heartbeats while it "works" (a short random delay), applies the task's effect
// at the soak's remote under the task's idempotencyKey, and completes the task with that effect. A poll that gets no
// answer (Shepherd's restart) is sent again after a short backoff. Every poll and every task ends as one JSON line in
// its log (lib/pool-log.ts); a poll that brought tasks is announced on stdout, so the soak can kill a worker holding one.
//
//   SHEPHERD_TOKEN=… node chaos/pool-worker.ts --shepherd URL --remote URL --pool NAME --id WORKER --log FILE
import { appendFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { sleep } from "../scripts/lib/async.ts";
import { requestJson } from "../scripts/lib/http-json.ts";
import { field } from "./lib/api-shapes.ts";
import { failureName } from "./lib/client.ts";
import type { TaskRef } from "./lib/pool.ts";
import type { TaskLine, WorkerLine } from "./lib/pool-log.ts";

const options = { shepherd: { type: "string" }, remote: { type: "string" }, pool: { type: "string" }, id: { type: "string" }, log: { type: "string" } } as const;
const { shepherd = "", remote = "", pool = "", id: workerId = "", log = "" } = parseArgs({ options }).values;
const auth = { Authorization: `Bearer ${process.env.SHEPHERD_TOKEN ?? ""}` };

const WAIT_MS = 5_000;
const MAX_PER_POLL = 2;
/** Tasks in hand at once: with room left while it works, a worker keeps a poll open, as a real one would. */
const SLOTS = 4;
/** A poll still unanswered this long past its waitMs is given up: it hung, and its line says so (status 0). */
const POLL_GIVE_UP_MS = 10_000;
const BACKOFF_MS = 500;
const WORK_MS = [300, 1_500] as const;
/** A report that got no answer (the restart) is sent again for this long. */
const REPORT_FOR_MS = 20_000;
const CALL_TIMEOUT_MS = 5_000;
/** Answers that say the attempt is no longer current: nobody is left to report to. */
const ATTEMPT_OVER: ReadonlySet<number> = new Set([401, 404, 409, 410]);

interface Task extends TaskRef {
  token: string;
  idempotencyKey: string;
  heartbeatMs: number;
  input: unknown;
}

interface Answer {
  status: number;
  body: unknown;
  error?: string;
}

const write = (line: WorkerLine): void => appendFileSync(log, `${JSON.stringify(line)}\n`);
const refOf = ({ workflowId, stepId, attempt }: TaskRef): TaskRef => ({ workflowId, stepId, attempt });
const taskUrl = (task: Task, what: string): string => `${shepherd}/v1/tasks/${encodeURIComponent(task.token)}/${what}`;

async function post(url: string, body: unknown, headers: Record<string, string> = {}, timeoutMs = CALL_TIMEOUT_MS): Promise<Answer> {
  try {
    const res = await requestJson(url, { method: "POST", body, headers, timeoutMs });
    return { status: res.status, body: res.body };
  } catch (error) {
    return { status: 0, body: null, error: failureName(error, "no answer") };
  }
}

/** One long poll, logged as it ended; the tasks it brought. */
async function poll(max: number): Promise<Task[] | null> {
  const start = Date.now();
  const res = await post(`${shepherd}/v1/pools/${pool}/tasks/poll`, { workerId, waitMs: WAIT_MS, max }, auth, WAIT_MS + POLL_GIVE_UP_MS);
  const listed = field(res.body, "tasks");
  const tasks = res.status === 200 && Array.isArray(listed) ? (listed as Task[]) : [];
  write({ type: "poll", workerId, start, end: Date.now(), waitMs: WAIT_MS, max, status: res.status, ...(res.error ? { error: res.error } : {}), tasks: tasks.map(refOf) });
  if (tasks.length) console.log(JSON.stringify({ holding: tasks.map(refOf) }));
  return res.status === 200 ? tasks : null;
}

/** Heartbeats while working; false once Shepherd says the attempt is over (or asks it to stop). */
async function workFor(task: Task, line: TaskLine): Promise<boolean> {
  const until = Date.now() + WORK_MS[0] + Math.random() * (WORK_MS[1] - WORK_MS[0]);
  for (;;) {
    const beat = await post(taskUrl(task, "heartbeat"), { progress: { stage: "working" } });
    line.heartbeats.push(beat.status);
    if (ATTEMPT_OVER.has(beat.status) || field(beat.body, "cancelRequested") === true) return false;
    if (Date.now() >= until) return true;
    await sleep(Math.min(task.heartbeatMs / 3, until - Date.now()));
  }
}

/** Works one task, applies its effect once per key at the remote, and reports it until an answer comes. */
async function run(task: Task): Promise<void> {
  const line: TaskLine = { type: "task", workerId, ...refOf(task), took: Date.now(), end: 0, heartbeats: [], effect: null, report: { what: "none", statuses: [] } };
  if (await workFor(task, line)) {
    const headers = { "Idempotency-Key": task.idempotencyKey, "Shepherd-Attempt": String(task.attempt), "Shepherd-Workflow-Id": task.workflowId, "Shepherd-Step-Id": task.stepId };
    const effect = await post(`${remote}/worker/${encodeURIComponent(task.stepId)}`, { workflow: task.workflowId, step: task.stepId, input: task.input }, headers);
    line.effect = effect.status;
    line.report.what = effect.status === 200 ? "complete" : "fail";
    const body = effect.status === 200 ? { output: effect.body } : { error: { message: `the remote answered ${effect.status}`, retryable: true } };
    for (const end = Date.now() + REPORT_FOR_MS; ; await sleep(BACKOFF_MS)) {
      const res = await post(taskUrl(task, line.report.what), body);
      line.report.statuses.push(res.status);
      if ((res.status > 0 && res.status < 500) || Date.now() >= end) break;
    }
  }
  write({ ...line, end: Date.now() });
}

let inHand = 0;
for (;;) {
  while (inHand >= SLOTS) await sleep(50);
  const tasks = await poll(Math.min(MAX_PER_POLL, SLOTS - inHand));
  if (tasks === null) await sleep(BACKOFF_MS);
  for (const task of tasks ?? []) {
    inHand += 1;
    void run(task).finally(() => (inHand -= 1));
  }
}
