// Which measurements a run makes, and on which engines: the plan the options and the engines' supports give.
// Plain Node (the bench is a Node tool, outside the Workers test projects): `node --test bench/test/*.test.ts`.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseOptions } from "../lib/args.ts";
import type { Engine, EngineSupport } from "../lib/engines/engine.ts";
import { plannedCases } from "../lib/plan.ts";

/** An engine with only what the plan looks at. */
const engine = (supports: EngineSupport): Engine => ({ supports }) as Engine;
const shepherd = engine({ detection: true, supervisor: true, burstAtScale: true, profile: true });
const workflows = engine({ detection: false, supervisor: false, burstAtScale: false });

const plan = (argv: string[]) => plannedCases(parseOptions(argv), "/repo");
const where = (argv: string[], name: string, rep = 1): boolean[] => {
  const planned = plan(argv).find((entry) => entry.name === name);
  assert.ok(planned, name);
  return [planned.applies(shepherd, rep), planned.applies(workflows, rep)];
};

describe("plannedCases", () => {
  it("runs the asked cases in the fixed order, one throughput and one burst case per size, burst last", () => {
    assert.deepEqual(
      plan(["--cases", "burst,latency,throughput,mixed", "--sizes", "10,20", "--burst-sizes", "30,40"]).map((entry) => entry.name),
      ["throughput-10", "throughput-20", "latency", "mixed", "burst-30", "burst-40"],
    );
  });

  it("runs detection only where the engine has it, and the supervisor's counters only in the first repeat", () => {
    assert.deepEqual(where(["--cases", "detection"], "detection"), [true, false]);
    assert.deepEqual(where(["--cases", "supervisor"], "supervisor", 1), [true, false]);
    assert.deepEqual(where(["--cases", "supervisor"], "supervisor", 2), [false, false]);
  });

  it("runs only the smallest burst on an engine that cannot finish the large ones, unless --burst-cap cuts them off", () => {
    const sizes = ["--cases", "burst", "--burst-sizes", "100,500"];
    assert.deepEqual(where([...sizes, "--burst-cap", "0"], "burst-100"), [true, true]);
    assert.deepEqual(where([...sizes, "--burst-cap", "0"], "burst-500"), [true, false]);
    assert.deepEqual(where([...sizes, "--burst-cap", "30"], "burst-500"), [true, true]);
  });

  it("repeats each burst size --burst-repeat times only", () => {
    const argv = ["--cases", "burst", "--burst-sizes", "100", "--repeat", "3", "--burst-repeat", "2"];
    assert.deepEqual(where(argv, "burst-100", 2), [true, true]);
    assert.deepEqual(where(argv, "burst-100", 3), [false, false]);
  });
});
