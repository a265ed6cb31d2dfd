// The pool case: its figures from what a run measured, the per-step times from a history, how it follows the
// workers' reports, what Shepherd is sent and how its poll answer is read, where the case sits in the plan and
// how the report shows it; and the case end to end against an engine in this process that hands its worker
// steps to the bench's workers through long polls, as Shepherd's pool does.
// Plain Node (the bench is a Node tool, outside the Workers test projects): `node --test bench/test/*.test.ts`.
/* global setTimeout, clearTimeout */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { FakeRemote } from "../../scripts/lib/fake-remote.ts";
import { parseOptions } from "../lib/args.ts";
import type { Engine, HistoryEvent, PollRequest, PoolApi, PoolTask, WorkflowStatus } from "../lib/engines/engine.ts";
import { poolBody } from "../lib/engines/shepherd.ts";
import { pollAnswer } from "../lib/engines/shepherd-answers.ts";
import { plannedCases } from "../lib/plan.ts";
import { pool, poolFigures, stepTimes, watchTasks } from "../lib/pool.ts";
import type { LoadMeasured } from "../lib/pool.ts";
import { renderPoolErrors, renderPoolTable } from "../lib/pool-report.ts";
import { newWorkerTally, startWorkers } from "../lib/pool-workers.ts";
import type { Results } from "../lib/results.ts";
import type { BenchContext } from "../lib/workload.ts";

const RUN = { tag: "p", workflows: 100, concurrency: 10, latencyRuns: 2, timeoutMs: 60_000 };
const completedAt = (endedAt: number): WorkflowStatus => ({ state: "completed", terminal: true, completed: true, endedAt });

const measured = (overrides: Partial<LoadMeasured> = {}): LoadMeasured => ({
  outcomes: new Map([["a", completedAt(5_000)], ["b", completedAt(11_000)], ["c", { state: "failed", terminal: true, completed: false }]]),
  started: 3,
  startTally: { backPressureAnswers: 2, retryAfterWaitMs: 0, noAnswers: 0, firstError: undefined },
  startedAt: 1_000,
  startsDoneAt: 1_500,
  cpuRun: 120,
  cpuPerRead: 1,
  reads: 20,
  ...overrides,
});

describe("poolFigures", () => {
  const tally = { ...newWorkerTally(), polls: 4, tasks: 10 };
  const samples = { workerStep: [30, 40, 50], httpStep: [10, 20, 30] };

  it("counts the steps of completed workflows per second from the first start to the last completion stamp", () => {
    const figures = poolFigures(RUN, { ...measured(), samples, tally });
    assert.deepEqual([figures.completed, figures.notCompleted, figures.startFailures, figures.backPressureAnswers], [2, 98, 97, 2]);
    assert.equal(figures.wallS, 10);
    assert.equal(figures.tasksPerSec, 1);
    assert.equal(figures.startPhaseS, 0.5);
  });

  it("takes the read-back's CPU out of the CPU per step, and says how many polls each task took", () => {
    const figures = poolFigures(RUN, { ...measured(), samples, tally });
    assert.equal(figures.cpuMsPerStep, 10);
    assert.equal(figures.pollsPerTask, 0.4);
  });

  it("puts the worker step's p50 beside the http step's, and the difference", () => {
    const figures = poolFigures(RUN, { ...measured(), samples, tally });
    assert.deepEqual([figures.workerStepP50Ms, figures.httpStepP50Ms, figures.addedMsPerStep], [40, 20, 20]);
    assert.equal(poolFigures(RUN, { ...measured(), samples: { workerStep: [1] }, tally }).addedMsPerStep, undefined);
  });

  it("fails the repeat when no workflow completed, with what the workers met", () => {
    const failed = { ...newWorkerTally(), firstError: "poll: 401 unauthorized" };
    assert.throws(() => poolFigures(RUN, { ...measured({ outcomes: new Map() }), samples, tally: failed }), /no workflow of p completed; the workers' first error: poll: 401/);
  });
});

describe("stepTimes", () => {
  const event = (type: string, stepId: string, at: number, attempt = 1): HistoryEvent => ({ type, stepId, attempt, at });

  it("times each step from scheduled to succeeded, and to its claim, on its first attempt", () => {
    const events = [
      event("step_scheduled", "s1", 100), event("step_started", "s1", 110), event("step_succeeded", "s1", 150),
      event("step_scheduled", "s2", 150), event("step_started", "s2", 170), event("step_started", "s2", 900, 2), event("step_succeeded", "s2", 230),
      event("step_scheduled", "s3", 230),
    ];
    assert.deepEqual(stepTimes(events), { total: [50, 80], claimed: [10, 20] });
  });

  it("gives nothing for an engine without a history", () => {
    assert.deepEqual(stepTimes([]), { total: [], claimed: [] });
  });
});

describe("watchTasks", () => {
  it("follows the load's tasks only, and counts a workflow finished at its last step's report", () => {
    const progress = watchTasks("run-p-load-");
    const task = (workflowId: string, stepId: string): PoolTask => ({ token: "t", workflowId, stepId, attempt: 1 });
    for (const [id, step] of [["run-p-load-1", "s1"], ["run-p-load-1", "s5"], ["run-p-load-2", "s4"], ["run-p-worker-0", "s5"]] as const) progress.record(task(id, step));
    assert.deepEqual([progress.stepsSeen.size, [...progress.finished]], [3, ["run-p-load-1"]]);
    progress.stop();
    progress.record(task("run-p-load-2", "s5"));
    assert.equal(progress.finished.size, 1);
  });
});

describe("what Shepherd is sent and answers", () => {
  it("a workflow of sequential worker steps of one pool, each task's input naming its workflow and step", () => {
    const spec = { id: "wf", pool: "bench-pool", steps: 2, retry: { maxAttempts: 3, initialIntervalMs: 1000, jitter: 0.2 }, timeouts: { startToCloseMs: 1000, heartbeatMs: 500 } };
    assert.deepEqual(poolBody(spec), {
      id: "wf",
      definition: {
        name: "pool",
        defaults: { retry: spec.retry, timeouts: spec.timeouts },
        steps: [
          { id: "s1", action: { type: "worker", pool: "bench-pool", input: { workflow: "{{ workflow.id }}", step: "s1" } } },
          { id: "s2", action: { type: "worker", pool: "bench-pool", input: { workflow: "{{ workflow.id }}", step: "s2" } } },
        ],
      },
    });
  });

  it("reads a poll's tasks, leaving out one it could not report, and a refused poll's advice", () => {
    const task = { token: "tok", workflowId: "wf", stepId: "s1", attempt: 1, input: {}, heartbeatMs: 30_000 };
    assert.deepEqual(pollAnswer(200, { tasks: [task, { workflowId: "wf" }] }, "", undefined), { status: 200, tasks: [{ token: "tok", workflowId: "wf", stepId: "s1", attempt: 1 }] });
    assert.deepEqual(pollAnswer(503, { error: "overloaded" }, "overloaded", 2), { status: 503, tasks: [], retryAfterS: 2, error: "overloaded" });
  });
});

describe("the pool case in the plan", () => {
  it("runs once per repeat after fan-out and before burst, only on an engine with worker pools", () => {
    const plan = plannedCases(parseOptions(["--cases", "burst,pool,fanout", "--fanout-sizes", "10", "--burst-sizes", "5", "--pool-size", "30"]), "/repo");
    assert.deepEqual(plan.map((entry) => entry.name), ["fanout-10", "pool-30", "burst-5"]);
    const planned = plan[1];
    assert.ok(planned);
    assert.deepEqual([planned.applies({ pool: {} } as Engine, 3), planned.applies({} as Engine, 1)], [true, false]);
  });

  it("is W = 1 000 by default and 100 with --quick", () => {
    assert.deepEqual([parseOptions([]).poolSize, parseOptions(["--quick"]).poolSize], [1000, 100]);
  });
});

describe("the Worker pool table", () => {
  const run = (workerStep: number[], httpStep: number[], extra: Record<string, unknown> = {}) => ({ completed: 1000, tasksPerSec: 100, wallS: 50, cpuMsPerStep: 8, pollsPerTask: 0.5, samples: { workerStep, httpStep }, ...extra });
  const results = {
    engines: {
      shepherd: { "pool-1000": [run([40, 60], [10, 20]), run([50], [30], { tasksPerSec: 120, workerError: "complete wf/s1#1: 409 moved on", pollErrors: 0, completeErrors: 1 })] },
      workflows: {},
    },
  } as unknown as Results;

  it("shows Shepherd's medians (nearest rank), the latencies over every repeat's samples and the added latency per step", () => {
    const lines = renderPoolTable(results, { cases: ["pool"], poolSize: 1000 }).split("\n");
    assert.equal(lines.length, 3, "Workflows has no row");
    assert.match(lines[2] ?? "", /^\| Shepherd \| 1000 \| 1000 \| 100 \| 50\.0 \| 8\.00 \| 0\.50 \| 50\.0 \| 20\.0 \| 30\.0 \| n\/a \|/);
    assert.equal(renderPoolTable(results, { cases: ["fanout"], poolSize: 1000 }), "");
  });

  it("lists what the workers met, per repeat", () => {
    assert.equal(renderPoolErrors(results), "- shepherd pool-1000 repeat 2: 0 poll errors, 1 reports refused; first: complete wf/s1#1: 409 moved on");
  });
});

describe("the workers", () => {
  it("stop at once, even while their long polls wait", async () => {
    const never: PoolApi = {
      startWorkflow: async () => ({ ok: true, status: 201 }),
      poll: (_request, signal) => new Promise((_resolve, reject) => signal?.addEventListener("abort", () => reject(new Error("aborted")))),
      complete: async () => ({ status: 200 }),
    };
    const workers = startWorkers(never, { pool: "p", workers: 3, waitMs: 20_000, max: 4 }, () => {});
    const before = Date.now();
    await workers.stop();
    assert.ok(Date.now() - before < 1_000);
    assert.deepEqual([workers.tally.polls, workers.tally.pollErrors], [3, 0]);
  });
});

describe("the pool case against an in-process engine", () => {
  it("completes every workflow through the workers' polls, and times worker steps against http steps", async () => {
    const ctx = { remote: { url: "http://remote.invalid" } as FakeRemote, runTag: `t${Date.now().toString(36)}` } satisfies BenchContext;
    const figures = await pool(ctx, inProcessPoolEngine(), { tag: "e2e", workflows: 30, concurrency: 5, latencyRuns: 2, timeoutMs: 20_000 });
    assert.deepEqual([figures.completed, figures.startFailures, figures.pollErrors, figures.completeErrors], [30, 0, 0, 0]);
    assert.ok(figures.tasksPerSec > 0);
    assert.deepEqual([figures.samples.workerStep?.length, figures.samples.httpStep?.length, figures.samples.workerWorkflow?.length], [10, 10, 2]);
    assert.ok((figures.addedMsPerStep ?? NaN) >= 0, "a step a worker pulls is no faster than one the engine runs itself");
  });
});

/**
 * An engine whose worker steps wait in one queue until a poll takes them (a poll with none waits, woken by the
 * next offer), and whose http steps complete at once. It keeps a history with the events the case reads.
 */
function inProcessPoolEngine(): Engine {
  const statuses = new Map<string, WorkflowStatus>();
  const histories = new Map<string, HistoryEvent[]>();
  const steps = new Map<string, number>();
  const queue: PoolTask[] = [];
  const waiting = new Set<() => void>();
  const record = (id: string, type: string, stepId: string): void => void histories.get(id)?.push({ type, stepId, attempt: 1, at: Date.now() });
  const offer = (id: string, index: number): void => {
    record(id, "step_scheduled", `s${index}`);
    queue.push({ token: `${id}/s${index}`, workflowId: id, stepId: `s${index}`, attempt: 1 });
    for (const wake of waiting) wake();
  };
  const begin = (id: string): void => {
    statuses.set(id, { state: "running", terminal: false, completed: false });
    histories.set(id, []);
  };
  const api: PoolApi = {
    async startWorkflow(spec) {
      begin(spec.id);
      steps.set(spec.id, spec.steps);
      offer(spec.id, 1);
      return { ok: true, status: 201 };
    },
    poll: (request, signal) => takeTasks(queue, waiting, request, signal, (task) => record(task.workflowId, "step_started", task.stepId)),
    async complete(token) {
      const [id = "", stepId = ""] = token.split("/");
      const index = Number(stepId.slice(1));
      record(id, "step_succeeded", stepId);
      if (index < (steps.get(id) ?? 0)) offer(id, index + 1);
      else statuses.set(id, completedAt(Date.now()));
      return { status: 200 };
    },
  };
  const engine: Pick<Engine, "label" | "workerdPids" | "pool" | "startWorkflow" | "readStatus" | "history" | "cancel"> = {
    label: "In-process",
    workerdPids: () => [],
    pool: api,
    async startWorkflow(spec) {
      begin(spec.id);
      for (const step of spec.steps) for (const type of ["step_scheduled", "step_started", "step_succeeded"]) record(spec.id, type, step.id);
      statuses.set(spec.id, completedAt(Date.now()));
      return { ok: true, status: 201 };
    },
    readStatus: async (id) => statuses.get(id) ?? { state: "http_404", terminal: false, completed: false },
    history: async (id) => histories.get(id) ?? [],
    cancel: async () => {},
  };
  return engine as Engine;
}

/** A long poll on the queue: up to `max` tasks as soon as there are any, none after waitMs; an abort rejects it, as fetch does. */
async function takeTasks(queue: PoolTask[], waiting: Set<() => void>, { waitMs, max }: PollRequest, signal: AbortSignal | undefined, claimed: (task: PoolTask) => void) {
  if (queue.length === 0) {
    await new Promise<void>((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        waiting.delete(done);
        resolve();
      };
      const timer = setTimeout(done, waitMs);
      waiting.add(done);
      signal?.addEventListener("abort", done);
    });
  }
  if (signal?.aborted) throw new Error("This operation was aborted");
  const tasks = queue.splice(0, max);
  tasks.forEach(claimed);
  return { status: 200, tasks };
}
