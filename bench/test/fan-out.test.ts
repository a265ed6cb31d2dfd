// The fan-out case: its figures from what a run measured, how it follows the items at the remote, what each
// engine is sent, where it sits in the plan and how the report shows it; and the case end to end against an
// engine in this process that calls the bench's remote for each item as an engine would.
// Plain Node (the bench is a Node tool, outside the Workers test projects): `node --test bench/test/*.test.ts`.
import assert from "node:assert/strict";
import { EventEmitter } from "node:events";
import { after, before, describe, it } from "node:test";
import { mapPool } from "../../scripts/lib/async.ts";
import type { FakeRemote, RemoteEvents, RequestRecord } from "../../scripts/lib/fake-remote.ts";
import { parseOptions } from "../lib/args.ts";
import type { Engine, FanOutApi, FanOutSpec, WorkflowStatus } from "../lib/engines/engine.ts";
import { fanOutBody } from "../lib/engines/shepherd.ts";
import { instanceStatus } from "../lib/engines/workflows.ts";
import { renderFanOutErrors, renderFanOutTable } from "../lib/fan-out-report.ts";
import { fanOut, fanOutFigures, watchItems } from "../lib/fan-out.ts";
import type { FanOutMeasured } from "../lib/fan-out.ts";
import { fanOutTimeoutMs, plannedCases } from "../lib/plan.ts";
import { startRemote } from "../lib/remote.ts";
import type { Results } from "../lib/results.ts";
import type { BenchContext } from "../lib/workload.ts";

/** Inside the bench's own range (8800–8809), above the ports a run uses and the other test file's. */
const PORT = 8809;
const RUN = { tag: "f", items: 1000, maxConcurrency: 100, timeoutMs: 60_000 };

const measured = (overrides: Partial<FanOutMeasured>): FanOutMeasured => ({
  start: { ok: true, status: 201 },
  startS: 0.2,
  status: { state: "completed", terminal: true, completed: true, endedAt: 11_000 },
  startedAt: 1_000,
  stoppedAt: 11_500,
  itemsAtRemote: 1000,
  itemRequests: 1000,
  cpuMs: 4_000,
  peakRssKb: 300 * 1024,
  rssBeforeKb: 200 * 1024,
  workerdRestarted: false,
  ...overrides,
});

describe("fanOutFigures", () => {
  it("times a completed run to the engine's completion stamp and counts CPU per item that reached the remote", () => {
    const figures = fanOutFigures(RUN, measured({}));
    assert.equal(figures.completed, 1);
    assert.equal(figures.endedAs, "completed");
    assert.equal(figures.wallS, 10);
    assert.equal(figures.itemsPerSec, 100);
    assert.equal(figures.cpuMsPerItem, 4);
    assert.equal(figures.gaveUpAfterS, undefined);
    assert.deepEqual([figures.peakRssMb, figures.rssGrowthMb], [300, 100]);
  });

  it("reports a run still going at its bound as not completed, with how long it was waited for and the work it did", () => {
    const figures = fanOutFigures(RUN, measured({ status: { state: "running", terminal: false, completed: false }, itemsAtRemote: 400 }));
    assert.deepEqual([figures.completed, figures.endedAs, figures.wallS, figures.itemsPerSec], [0, "not ended", undefined, undefined]);
    assert.equal(figures.gaveUpAfterS, 10.5);
    assert.deepEqual([figures.cpuMsPerItem, figures.cpuS], [undefined, 4]);
  });

  it("reports an instance that errored, and a start the engine refused, with the engine's error", () => {
    const errored = fanOutFigures(RUN, measured({ status: { state: "errored", terminal: true, completed: false, error: "step limit" } }));
    assert.deepEqual([errored.completed, errored.endedAs, errored.error], [0, "errored", "step limit"]);
    const refused = fanOutFigures(RUN, measured({ start: { ok: false, status: 400, error: "unknown step kind" }, status: undefined, itemsAtRemote: 0 }));
    assert.deepEqual([refused.completed, refused.endedAs, refused.error, refused.cpuMsPerItem], [0, "start_400", "unknown step kind", undefined]);
  });

  it("has no CPU figure when workerd restarted mid-run", () => {
    assert.equal(fanOutFigures(RUN, measured({ cpuMs: undefined, workerdRestarted: true })).cpuMsPerItem, undefined);
  });
});

describe("watchItems", () => {
  it("counts the run's distinct items and all their requests, and nothing of other workflows", () => {
    const events = new EventEmitter<RemoteEvents>();
    const progress = watchItems({ events }, "wf-1:");
    const record: RequestRecord = { method: "POST", path: "/ok", attempt: 1, arrivedAt: 0 };
    for (const key of ["wf-1:each:0", "wf-1:each:1", "wf-1:each:1", "wf-10:each:0", "other:each:0"]) events.emit("request", key, record);
    assert.deepEqual([progress.keys.size, progress.requests], [2, 3]);
    progress.stop();
    events.emit("request", "wf-1:each:2", record);
    assert.equal(progress.keys.size, 2);
  });
});

describe("what each engine is sent", () => {
  const spec: FanOutSpec = { id: "wf", items: 3, url: "http://remote/ok", maxConcurrency: 50, retry: { maxAttempts: 3, initialIntervalMs: 1000, jitter: 0.2 }, timeouts: { startToCloseMs: 1000, heartbeatMs: 500 } };

  it("Shepherd: one map step over the input's items, each a POST of its index and item, under the run's policy", () => {
    assert.deepEqual(fanOutBody(spec), {
      id: "wf",
      definition: {
        name: "fanout",
        defaults: { retry: spec.retry, timeouts: spec.timeouts },
        steps: [{
          id: "each",
          map: { items: "{{ input.items }}", maxConcurrency: 50, step: { action: { type: "http", url: "http://remote/ok", method: "POST", body: { n: "{{ index }}", item: "{{ item }}" } } } },
        }],
      },
      input: { items: [0, 1, 2] },
    });
  });

  it("Workflows: an errored instance is ended, with its error; a completed one carries its completion stamp", () => {
    assert.deepEqual(instanceStatus(200, { status: "errored", error: { name: "Error", message: "limit" } }, ""), {
      state: "errored", terminal: true, completed: false, endedAt: undefined, error: '{"name":"Error","message":"limit"}',
    });
    assert.equal(instanceStatus(200, { status: "complete", output: { finishedAt: 5 } }, "").endedAt, 5);
  });
});

describe("the fan-out case in the plan", () => {
  const withFanOut = { supports: { detection: true, supervisor: true, burstAtScale: true }, fanOut: {} } as Engine;
  const without = { supports: { detection: false, supervisor: false, burstAtScale: true } } as Engine;

  it("runs one case per size after mixed and before burst, only on an engine that has it, --fanout-repeat times", () => {
    const plan = plannedCases(parseOptions(["--cases", "burst,fanout,mixed", "--fanout-sizes", "10,20", "--burst-sizes", "5", "--repeat", "3", "--fanout-repeat", "2"]), "/repo");
    assert.deepEqual(plan.map((entry) => entry.name), ["mixed", "fanout-10", "fanout-20", "burst-5"]);
    const fan = plan[1];
    assert.ok(fan);
    assert.deepEqual([fan.applies(withFanOut, 2), fan.applies(withFanOut, 3), fan.applies(without, 1)], [true, false, false]);
  });

  it("is bounded by a minute plus 60 ms per item unless --fanout-timeout says otherwise", () => {
    assert.equal(fanOutTimeoutMs(10_000, undefined), 660_000);
    assert.equal(fanOutTimeoutMs(10_000, 30), 30_000);
    assert.deepEqual(parseOptions(["--quick"]).fanOutSizes, [200]);
  });
});

describe("the Fan-out table", () => {
  const options = { cases: ["fanout"] as const, fanOutSizes: [1000] };
  const results = {
    engines: {
      shepherd: { "fanout-1000": [{ completed: 1, endedAs: "completed", itemsAtRemote: 1000, wallS: 10, itemsPerSec: 100, cpuMsPerItem: 4 }] },
      workflows: { "fanout-1000": [{ completed: 0, endedAs: "not ended", itemsAtRemote: 600, gaveUpAfterS: 100, error: undefined }, { completed: 0, endedAs: "errored", itemsAtRemote: 600, error: "boom" }] },
    },
  } as unknown as Results;

  it("says per engine and size whether the workflow completed, how it ended, and its medians", () => {
    const [, , shepherd, workflows] = renderFanOutTable(results, options).split("\n");
    assert.match(shepherd ?? "", /^\| Shepherd \| 1000 \| yes \(1\/1\) \| completed \| 1000 \| 10\.0 \| 100 \| 4\.00 \|/);
    assert.match(workflows ?? "", /^\| Workflows \| 1000 \| no \(0\/2\) \| not ended, errored \| 600 \| n\/a \|/);
  });

  it("lists why a run did not complete, when the engine said", () => {
    assert.equal(renderFanOutErrors(results), "- workflows fanout-1000: boom");
  });
});

/**
 * Runs the items of each fan-out workflow, `maxConcurrency` at a time, each a POST with the item's key; or never
 * ends; or starts the workflow but leaves the start request unanswered (it times out).
 */
function inProcessFanOut({ ends, startTimesOut = false }: { ends: boolean; startTimesOut?: boolean }): Engine {
  const statuses = new Map<string, WorkflowStatus>();
  const run = async ({ id, items, url, maxConcurrency }: FanOutSpec): Promise<void> => {
    await mapPool(Array.from({ length: items }, (_, index) => index), maxConcurrency, async (index) => {
      const response = await fetch(url, { method: "POST", headers: { "Idempotency-Key": `${id}:each:${index}` }, body: JSON.stringify({ n: index }) });
      await response.text();
    });
    if (ends) statuses.set(id, { state: "completed", terminal: true, completed: true, endedAt: Date.now() });
  };
  const api: FanOutApi = {
    async start(spec) {
      statuses.set(spec.id, { state: "running", terminal: false, completed: false });
      void run(spec);
      if (startTimesOut) throw new Error("The operation was aborted due to timeout");
      return { ok: true, status: 201 };
    },
    readStatus: async (id) => statuses.get(id) ?? { state: "http_404", terminal: false, completed: false },
    cancel: async () => {},
  };
  return { label: "In-process", workerdPids: () => [], fanOut: api } as unknown as Engine;
}

describe("the fan-out case against an in-process engine", () => {
  let remote: FakeRemote;
  let ctx: BenchContext;
  before(async () => {
    remote = await startRemote(PORT);
    ctx = { remote, runTag: `t${Date.now().toString(36)}` };
  });
  after(() => remote.close());

  it("sees every item reach the remote and the workflow complete", async () => {
    const figures = await fanOut(ctx, inProcessFanOut({ ends: true }), { tag: "ok", items: 200, maxConcurrency: 20, timeoutMs: 20_000 });
    assert.deepEqual([figures.completed, figures.endedAs, figures.itemsAtRemote, figures.itemRequests], [1, "completed", 200, 200]);
    assert.ok((figures.itemsPerSec ?? 0) > 0);
  });

  it("goes on with a workflow whose start got no answer but which the engine has", async () => {
    const figures = await fanOut(ctx, inProcessFanOut({ ends: true, startTimesOut: true }), { tag: "late", items: 20, maxConcurrency: 5, timeoutMs: 20_000 });
    assert.deepEqual([figures.completed, figures.itemsAtRemote], [1, 20]);
  });

  it("reports a workflow that never ends as not completed once its bound has passed, instead of failing", async () => {
    const figures = await fanOut(ctx, inProcessFanOut({ ends: false }), { tag: "stuck", items: 50, maxConcurrency: 10, timeoutMs: 1_000 });
    assert.deepEqual([figures.completed, figures.endedAs, figures.itemsAtRemote], [0, "not ended", 50]);
    assert.ok((figures.gaveUpAfterS ?? 0) >= 1);
  });
});
