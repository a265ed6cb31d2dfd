// The load and latency cases end to end against an engine that runs in this process: it calls the bench's
// remote for each step as an engine would, so what the cases count (starts, completions, samples, the
// read-back) can be checked without wrangler dev. The CPU and memory figures read no process here.
// Plain Node (the bench is a Node tool, outside the Workers test projects): `node --test bench/test/*.test.ts`.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { FakeRemote } from "../../scripts/lib/fake-remote.ts";
import { burst } from "../lib/burst.ts";
import { latency, retry } from "../lib/cases.ts";
import type { Engine, WorkflowSpec, WorkflowStatus } from "../lib/engines/engine.ts";
import { startRemote } from "../lib/remote.ts";
import { throughput } from "../lib/throughput.ts";
import type { BenchContext } from "../lib/workload.ts";

/** Inside the bench's own range (8800–8809), above the ports a run uses. */
const PORT = 8808;

/** Runs each workflow's steps one after the other, each attempt a POST to the remote, retried at once on a 5xx. */
function inProcessEngine(): Engine {
  const statuses = new Map<string, WorkflowStatus>();
  const run = async ({ id, steps, retry: policy }: WorkflowSpec): Promise<void> => {
    for (const step of steps) {
      let ok = false;
      for (let attempt = 1; attempt <= policy.maxAttempts && !ok; attempt++) {
        const headers = { "Idempotency-Key": `${id}:${step.id}`, "Shepherd-Attempt": String(attempt) };
        const response = await fetch(step.url, { method: "POST", headers });
        await response.text();
        ok = response.ok;
      }
      if (!ok) return void statuses.set(id, { state: "failed", terminal: true, completed: false, endedAt: Date.now() });
    }
    statuses.set(id, { state: "completed", terminal: true, completed: true, endedAt: Date.now() });
  };
  const nothing = async (): Promise<void> => {};
  return {
    name: "shepherd",
    label: "In-process",
    supports: { detection: false, supervisor: false, burstAtScale: true },
    source: "test",
    origin: "http://127.0.0.1:0",
    logFile: "",
    start: nothing,
    restart: nothing,
    stop: nothing,
    workerdPids: () => [],
    async startWorkflow(spec) {
      if (statuses.has(spec.id)) return { ok: false, status: 409, error: "exists" };
      statuses.set(spec.id, { state: "running", terminal: false, completed: false });
      void run(spec);
      return { ok: true, status: 201 };
    },
    readStatus: async (id) => statuses.get(id) ?? { state: "http_404", terminal: false, completed: false },
    cancel: nothing,
  };
}

describe("the cases against an in-process engine", () => {
  let remote: FakeRemote;
  let ctx: BenchContext;
  before(async () => {
    remote = await startRemote(PORT);
    ctx = { remote, runTag: `t${Date.now().toString(36)}` };
  });
  after(() => remote.close());

  it("throughput starts every workflow and counts each one completed", async () => {
    const figures = await throughput(ctx, inProcessEngine(), { tag: "tp", workflows: 20, concurrency: 5, timeoutMs: 20_000 });
    assert.equal(figures.completed, 20);
    assert.equal(figures.startFailures, 0);
    assert.equal(figures.notCompleted, 0);
    assert.ok(figures.stepsPerSec > 0);
  });

  it("burst starts every workflow through its clients and reads each one back ended", async () => {
    const figures = await burst(ctx, inProcessEngine(), { tag: "b", workflows: 30, clients: 4, timeoutMs: 20_000 });
    assert.deepEqual([figures.completed, figures.failed, figures.notEnded, figures.startFailures], [30, 0, 0, 0]);
    assert.equal(figures.attemptsPerStep, undefined, "an engine without views has no view figures");
    assert.ok((figures.stepsPerSec ?? 0) > 0);
  });

  it("latency takes one sample per run, and no hops from an engine without a history", async () => {
    const figures = await latency(ctx, inProcessEngine(), { tag: "lat", runs: 3 });
    assert.equal(figures.samples.latency?.length, 3);
    assert.equal(figures.samples.observed?.length, 3);
    assert.equal(figures.samples.queueHop, undefined);
  });

  it("retry measures from the 503 to the retry's arrival", async () => {
    const figures = await retry(ctx, inProcessEngine(), { tag: "re", samples: 2 });
    assert.equal(figures.samples.retryGap?.length, 2);
    assert.ok(figures.samples.retryGap?.every((gap) => gap >= 0));
  });
});
