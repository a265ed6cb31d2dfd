// A fake of the service's worker-pool routes, as the API contract states them, on a Node HTTP server: the poll (a
// long poll that hands each task to exactly one poll, even one whose caller has gone), and the task routes with
// the service's answers (409 for an attempt no longer current, 401 for an expired token). It lets the worker loop
// and `shepherd worker` be tested for what only they decide: slots, heartbeats, reports, backoff, stop.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export const FAKE_TOKEN = "fake-api-token";

export interface FakeTask {
  token: string;
  pool: string;
  wire: Record<string, unknown>;
  /** What the service answers this attempt's heartbeats and reports. */
  state: "current" | "cancel_requested" | "not_current" | "expired";
  heartbeats: { at: number; progress?: unknown }[];
  outcome?: { type: "complete"; output: unknown } | { type: "fail"; error: { message: string; retryable?: boolean } };
}

interface Waiter {
  pool: string;
  max: number;
  answer: (tasks: FakeTask[]) => void;
}

export interface FakePools {
  url: string;
  /** Every poll as it arrived. */
  polls: { pool: string; workerId: string; waitMs: number; max: number }[];
  /** Polls waiting now, their callers gone or not. */
  waiting(): number;
  /** Tasks handed to a poll whose caller had gone. */
  lost(): FakeTask[];
  /** A task for the pool: handed to a waiting poll at once, else to the next. */
  enqueue(pool: string, input: unknown, overrides?: Record<string, unknown>): FakeTask;
  pending(pool: string): number;
  /** The next `count` requests get this status, or have their connection cut ("reset"), as a restarting service does. */
  failNext(count: number, how: number | "reset"): void;
  close(): Promise<void>;
}

let sequence = 0;

export async function startFakePools(): Promise<FakePools> {
  const tasks = new Map<string, FakeTask>();
  const queue: FakeTask[] = [];
  const waiters: Waiter[] = [];
  const polls: FakePools["polls"] = [];
  const failures: (number | "reset")[] = [];

  const handOut = () => {
    for (const waiter of [...waiters]) {
      const ready = queue.filter((task) => task.pool === waiter.pool).slice(0, waiter.max);
      if (ready.length === 0) continue;
      for (const task of ready) queue.splice(queue.indexOf(task), 1);
      waiter.answer(ready);
    }
  };

  const lost: FakeTask[] = [];
  const routes: Routes = { tasks, lost, queue, waiters, polls, handOut };
  const server = createServer((req, res) => {
    const failure = failures.shift();
    if (failure === "reset") return req.socket.destroy();
    if (failure !== undefined) return reply(res, failure, { error: { code: "unavailable", message: "the fake is failing on purpose" } });
    void readJson(req).then((body) => route(routes, req, res, body));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    polls,
    waiting: () => waiters.length,
    lost: () => [...lost],
    enqueue(pool, input, overrides = {}) {
      const token = `tok-${(sequence += 1)}`;
      const wire = { token, workflowId: `wf-${sequence}`, stepId: "resize", attempt: 1, kind: "action", input, heartbeatMs: 3_000, startToCloseMs: 30_000, deadlineAt: Date.now() + 30_000, idempotencyKey: `wf-${sequence}:resize`, ...overrides };
      const task: FakeTask = { token, pool, wire, state: "current", heartbeats: [] };
      tasks.set(token, task);
      queue.push(task);
      handOut();
      return task;
    },
    pending: (pool) => queue.filter((task) => task.pool === pool).length,
    failNext: (count, how) => failures.push(...Array<number | "reset">(count).fill(how)),
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

interface Routes {
  tasks: Map<string, FakeTask>;
  lost: FakeTask[];
  queue: FakeTask[];
  waiters: Waiter[];
  polls: FakePools["polls"];
  handOut(): void;
}

function route(routes: Routes, req: IncomingMessage, res: ServerResponse, body: any): void {
  const path = new URL(req.url ?? "/", "http://fake").pathname;
  const pollPath = /^\/v1\/pools\/([^/]+)\/tasks\/poll$/.exec(path);
  if (req.method === "POST" && pollPath) return poll(routes, req, res, decodeURIComponent(pollPath[1] ?? ""), body);
  const taskPath = /^\/v1\/tasks\/([^/]+)\/(heartbeat|complete|fail)$/.exec(path);
  const task = taskPath ? routes.tasks.get(decodeURIComponent(taskPath[1] ?? "")) : undefined;
  if (req.method !== "POST" || !taskPath || !task) return reply(res, 404, { error: { code: "not_found", message: `no route for ${path}` } });
  if (task.state === "expired") return reply(res, 401, { error: { code: "unauthorized", message: "The task token has expired." } });
  if (task.state === "not_current" || task.outcome) return reply(res, 409, { error: { code: "stale_attempt", message: "not current" } });
  if (taskPath[2] === "heartbeat") {
    task.heartbeats.push({ at: Date.now(), ...("progress" in body ? { progress: body.progress } : {}) });
    return reply(res, 200, { cancelRequested: task.state === "cancel_requested" });
  }
  if (task.state === "cancel_requested") return reply(res, 409, { error: { code: "stale_attempt", message: "cancelled" } });
  task.outcome = taskPath[2] === "complete" ? { type: "complete", output: body.output ?? null } : { type: "fail", error: body.error };
  reply(res, 200, { ok: true });
}

function poll(routes: Routes, req: IncomingMessage, res: ServerResponse, pool: string, body: any): void {
  if (req.headers.authorization !== `Bearer ${FAKE_TOKEN}`) return reply(res, 401, { error: { code: "unauthorized", message: "Missing or invalid API token." } });
  routes.polls.push({ pool, workerId: body.workerId, waitMs: body.waitMs, max: body.max });
  const leave = () => {
    clearTimeout(timer);
    const index = routes.waiters.indexOf(waiter);
    if (index >= 0) routes.waiters.splice(index, 1);
  };
  const waiter: Waiter = {
    pool,
    max: body.max ?? 1,
    answer: (tasks) => {
      leave();
      if (gone) routes.lost.push(...tasks);
      reply(res, 200, { tasks: tasks.map((task) => task.wire) });
    },
  };
  let gone = false;
  res.on("close", () => (gone = !res.writableEnded));
  // As the service's pool does, a poll whose caller has gone keeps waiting and still takes a task (lost to everyone).
  const timer = setTimeout(() => waiter.answer([]), body.waitMs ?? 20_000);
  routes.waiters.push(waiter);
  routes.handOut();
}

function reply(res: ServerResponse, status: number, body: unknown): void {
  if (res.writableEnded || res.destroyed) return;
  res.writeHead(status, { "Content-Type": "application/json" });
  res.end(JSON.stringify(body));
}

function readJson(req: IncomingMessage): Promise<any> {
  return new Promise((resolve) => {
    let text = "";
    req.on("data", (chunk: Buffer) => (text += chunk.toString("utf8")));
    req.on("end", () => {
      try {
        resolve(text === "" ? {} : JSON.parse(text));
      } catch {
        resolve({});
      }
    });
  });
}
