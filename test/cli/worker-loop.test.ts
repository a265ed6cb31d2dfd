// The typed client's worker loop (src/client/worker.ts), in Node as `shepherd worker` runs it, against a fake of the
// service's pool and task routes (support/fake-pools.ts): what the loop itself decides, one case each.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createShepherdClient, ShepherdApiError, TaskAbortedError, type TaskHandler, type WorkerEvent, type WorkerHandle, type WorkerOptions } from "../../src/client";
import { FAKE_TOKEN, startFakePools, type FakePools } from "./support/fake-pools";

let fake: FakePools;
let handles: WorkerHandle[] = [];

beforeEach(async () => {
  fake = await startFakePools();
});

afterEach(async () => {
  await Promise.all(handles.map((handle) => handle.stop({ abandonPoll: true })));
  handles = [];
  await fake.close();
});

/** A worker of pool "gpu" on the fake; it is stopped after the test. */
function startWorker(handler: TaskHandler, options: Partial<WorkerOptions> = {}): WorkerHandle {
  const client = createShepherdClient({ url: fake.url, token: FAKE_TOKEN, runtime: { random: () => 0.5 } });
  const handle = client.worker({ pool: "gpu", workerId: "w-test", waitMs: 500, handler, ...options });
  handles.push(handle);
  return handle;
}

/** A promise and the function that resolves it: a handler waits on it until the test lets it go. */
function gate() {
  let open = () => {};
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

const until = (check: () => void, timeout = 5_000) => vi.waitFor(check, { timeout, interval: 10 });

describe("the worker loop", () => {
  it("completes a task with the handler's output, and fails one with what it threw, retryable or not", async () => {
    const handler: TaskHandler = (task) => {
      const input = task.input as { n: number; fail?: "retryable" | "final" };
      if (input.fail === "retryable") throw new Error("disk full");
      if (input.fail === "final") throw Object.assign(new Error("corrupt image"), { retryable: false });
      return { doubled: input.n * 2 };
    };
    const [done, busy, corrupt] = [fake.enqueue("gpu", { n: 21 }), fake.enqueue("gpu", { n: 1, fail: "retryable" }), fake.enqueue("gpu", { n: 1, fail: "final" })];
    startWorker(handler, { concurrency: 3 });
    await until(() => expect([done, busy, corrupt].every((task) => task.outcome)).toBe(true));
    expect(done.outcome).toEqual({ type: "complete", output: { doubled: 42 } });
    expect(busy.outcome).toEqual({ type: "fail", error: { message: "disk full", retryable: true } });
    expect(corrupt.outcome).toEqual({ type: "fail", error: { message: "corrupt image", retryable: false } });
    expect(fake.polls[0]).toMatchObject({ pool: "gpu", workerId: "w-test", waitMs: 500 });
  });

  it("runs at most `concurrency` handlers at once and polls for the free slots only", async () => {
    const release = gate();
    let running = 0;
    let most = 0;
    startWorker(
      async () => {
        most = Math.max(most, (running += 1));
        await release.opened;
        running -= 1;
      },
      { concurrency: 2 },
    );
    const tasks = [1, 2, 3, 4, 5].map((n) => fake.enqueue("gpu", { n }));
    await until(() => expect(running).toBe(2));
    // Both slots taken: the worker does not poll until one is free.
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(fake.waiting()).toBe(0);
    expect(fake.pending("gpu")).toBe(3);
    release.open();
    await until(() => expect(tasks.every((task) => task.outcome?.type === "complete")).toBe(true));
    expect(most).toBe(2);
    expect(Math.max(...fake.polls.map((poll) => poll.max))).toBe(2);
    expect(fake.polls.every((poll) => poll.max >= 1)).toBe(true);
  });

  it("heartbeats a third as often as the task's heartbeatMs, with the progress the handler reported", async () => {
    const task = fake.enqueue("gpu", {}, { heartbeatMs: 300 });
    startWorker(async (_task, { progress }) => {
      progress({ percent: 50 });
      await new Promise((resolve) => setTimeout(resolve, 700));
    });
    await until(() => expect(task.outcome?.type).toBe("complete"));
    // Every 100 ms for 700 ms: one or two fewer when timers drift.
    expect(task.heartbeats.length).toBeGreaterThanOrEqual(5);
    expect(task.heartbeats.at(-1)?.progress).toEqual({ percent: 50 });
  });

  it.each([
    ["the service asks to cancel the attempt", "cancel_requested", "cancel_requested"],
    ["a heartbeat answers 409: the attempt is no longer current", "not_current", "not_current"],
    ["a heartbeat answers 401: the token has expired", "expired", "token_expired"],
  ] as const)("aborts the handler's signal when %s, and reports nothing", async (_name, state, code) => {
    const task = fake.enqueue("gpu", {}, { heartbeatMs: 150 });
    const events: WorkerEvent[] = [];
    let reason: unknown;
    startWorker(
      (_task, { signal }) =>
        new Promise((_resolve, reject) => {
          task.state = state;
          signal.addEventListener("abort", () => reject((reason = signal.reason)));
        }),
      { onEvent: (event) => events.push(event) },
    );
    await until(() => expect(events.map((event) => event.type)).toContain("task_abandoned"));
    expect(reason).toBeInstanceOf(TaskAbortedError);
    expect((reason as TaskAbortedError).code).toBe(code);
    expect(events.find((event) => event.type === "task_abandoned")).toMatchObject({ cause: code });
    expect(task.outcome).toBeUndefined();
  });

  it("aborts the handler's signal when the attempt's start-to-close deadline passes", async () => {
    const task = fake.enqueue("gpu", {}, { startToCloseMs: 200, deadlineAt: Date.now() + 200 });
    const aborted = gate();
    startWorker((_task, { signal }) => new Promise((resolve) => signal.addEventListener("abort", () => resolve(aborted.open()))));
    await aborted.opened;
    expect(task.outcome).toBeUndefined();
  });
});

describe("stopping and failing polls", () => {
  it("stops gracefully: no poll after stop(), the poll in flight answered and its task run, the running handlers finished", async () => {
    const release = gate();
    const first = fake.enqueue("gpu", { n: 1 });
    const handle = startWorker(async (task) => {
      await release.opened;
      return (task.input as { n: number }).n;
    }, { concurrency: 2 });
    // One slot is still free, so a poll is waiting.
    await until(() => expect(fake.waiting()).toBe(1));
    let stopped = false;
    const stopping = handle.stop().then(() => (stopped = true));
    const polls = fake.polls.length;
    // The service hands the next task to the poll in flight: the worker runs it rather than lose it.
    const second = fake.enqueue("gpu", { n: 2 });
    const third = fake.enqueue("gpu", { n: 3 });
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(stopped).toBe(false);
    release.open();
    await stopping;
    expect([first.outcome, second.outcome]).toEqual([{ type: "complete", output: 1 }, { type: "complete", output: 2 }]);
    expect(third.outcome).toBeUndefined();
    expect(fake.polls).toHaveLength(polls);
    expect(fake.pending("gpu")).toBe(1);
    expect(fake.lost()).toEqual([]);
  });

  it("stops as soon as the running handlers are done with stop({ abandonPoll: true }), leaving the poll in flight", async () => {
    const handle = startWorker(() => "ok", { waitMs: 10_000 });
    await until(() => expect(fake.waiting()).toBe(1));
    const started = Date.now();
    await handle.stop({ abandonPoll: true });
    expect(Date.now() - started).toBeLessThan(1_000);
  });

  it("stops when its signal is aborted, once the poll in flight is answered", async () => {
    const controller = new AbortController();
    const handle = startWorker(() => "ok", { signal: controller.signal });
    await until(() => expect(fake.waiting()).toBe(1));
    const polls = fake.polls.length;
    controller.abort();
    await handle.done;
    expect(fake.polls).toHaveLength(polls);
    expect(fake.waiting()).toBe(0);
  });

  it("backs off after 5xx answers and lost connections, then polls again and takes the task", async () => {
    fake.failNext(2, 500);
    fake.failNext(2, "reset");
    const task = fake.enqueue("gpu", { n: 1 });
    const events: WorkerEvent[] = [];
    startWorker(() => "ok", { backoff: { initialMs: 40, maxMs: 200 }, onEvent: (event) => events.push(event) });
    await until(() => expect(task.outcome?.type).toBe("complete"));
    const failed = events.filter((event) => event.type === "poll_failed");
    expect(failed).toHaveLength(4);
    // Half (random 0.5) of a ceiling that doubles from 40 ms.
    expect(failed.map((event) => event.retryInMs)).toEqual([20, 40, 80, 100]);
  });

  it("ends, rejecting `done`, when the service refuses the poll for good (a bad token)", async () => {
    const client = createShepherdClient({ url: fake.url, token: "wrong" });
    const handle = client.worker({ pool: "gpu", handler: () => "ok" });
    handles.push(handle);
    await expect(handle.done).rejects.toSatisfy((error) => error instanceof ShepherdApiError && error.status === 401);
  });

  it("refuses a concurrency that is not a whole number from 1", () => {
    expect(() => startWorker(() => "ok", { concurrency: 0 })).toThrow("worker: concurrency must be a whole number from 1");
  });
});
