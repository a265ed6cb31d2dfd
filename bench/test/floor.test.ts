// The floor beside the other engines: its answers read, its columns and ratios in the tables, the goal's verdict,
// and where the bill and rows cases run.
// Plain Node (the bench is a Node tool, outside the Workers test projects): `node --test bench/test/*.test.ts`.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseOptions, portRange } from "../lib/args.ts";
import type { Engine, EngineSupport } from "../lib/engines/engine.ts";
import { floorStatus } from "../lib/engines/floor.ts";
import { renderFloorTable } from "../lib/floor-report.ts";
import { plannedCases } from "../lib/plan.ts";
import { renderTable } from "../lib/report.ts";
import type { Results } from "../lib/results.ts";

const meta = {} as Results["meta"];
const throughput = (stepsPerSec: number, cpuMsPerStep: number) => ({ "throughput-1000": [{ stepsPerSec, cpuMsPerStep }] });
const results: Results = {
  meta,
  engines: { shepherd: throughput(200, 6.5), workflows: throughput(180, 5.2), floor: throughput(400, 5) },
};
const options = { ...parseOptions(["--cases", "throughput", "--sizes", "1000"]) };

describe("the tables with the floor", () => {
  it("give the floor its column and each engine its ratio to it", () => {
    const table = renderTable(results, options);
    assert.match(table, /^\| Figure \| Shepherd \| Workflows \| Floor \| Shepherd ÷ Workflows \| Shepherd ÷ floor \| Workflows ÷ floor \|/);
    assert.match(table, /\| Throughput W=1000: steps\/s \| 200 \| 180 \| 400 \| 1\.11 \| 0\.50 \| 0\.45 \|/);
  });

  it("keep the two-engine table when the run had no floor", () => {
    const table = renderTable({ meta, engines: { shepherd: results.engines.shepherd, workflows: results.engines.workflows } }, options);
    assert.match(table, /^\| Figure \| Shepherd \| Workflows \| Shepherd ÷ Workflows \|\n/);
  });

  it("say whether Shepherd's CPU per step at W = 1 000 is within 1.3× the floor's", () => {
    const section = renderFloorTable(results, options);
    assert.match(section, /\| Throughput W=1000: workerd CPU ms\/step \| 6\.50 \| 5\.20 \| 5\.00 \| 1\.30 \| 1\.04 \|/);
    assert.match(section, /1\.30× the floor's, within the goal of 1\.3×/);
    const over = renderFloorTable({ ...results, engines: { ...results.engines, shepherd: throughput(150, 8) } }, options);
    assert.match(over, /1\.60× the floor's, over the goal/);
    assert.equal(renderFloorTable({ meta, engines: { shepherd: results.engines.shepherd } }, options), "");
  });
});

describe("floorStatus", () => {
  it("reads the floor's status and completion stamp, and a failed read as not over", () => {
    assert.deepEqual(floorStatus(200, { status: "completed", endedAt: 5 }, ""), { state: "completed", terminal: true, completed: true, endedAt: 5 });
    assert.equal(floorStatus(200, { status: "running" }, "").terminal, false);
    assert.deepEqual(floorStatus(404, undefined, "nope"), { state: "http_404", terminal: false, completed: false, error: "nope" });
  });
});

describe("the bill and rows cases in the plan", () => {
  const engine = (supports: EngineSupport): Engine => ({ supports }) as Engine;
  const planned = (name: string) => plannedCases(parseOptions(["--cases", "bill,rows"]), "/repo").find((entry) => entry.name === name);

  it("bill every engine once, and count rows only where the user pays per row", () => {
    const [bill, rows] = [planned("bill"), planned("rows")];
    assert.ok(bill && rows);
    const [shepherd, workflows] = [engine({ detection: true, supervisor: true, burstAtScale: true, rowsBilled: true }), engine({ detection: false, supervisor: false, burstAtScale: false })];
    assert.deepEqual([bill.applies(shepherd, 1), bill.applies(workflows, 1), bill.applies(shepherd, 2)], [true, true, false]);
    assert.deepEqual([rows.applies(shepherd, 1), rows.applies(workflows, 1)], [true, false]);
  });
});

describe("portRange", () => {
  it("reads BENCH_PORTS' low-high, and nothing else", () => {
    assert.deepEqual(portRange("8930-8939"), [8930, 8939]);
    assert.equal(portRange("8930"), undefined);
    assert.equal(portRange(undefined), undefined);
  });
});
