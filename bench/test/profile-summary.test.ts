// The profile summary and the source mapping of `npm run bench -- --profile`, on small hand-written profiles.
// Plain Node (the bench is a Node tool, outside the Workers test projects): `node --test bench/test/*.test.ts`.
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { pathToFileURL } from "node:url";
import { mapProfileToSources } from "../lib/profile-sources.ts";
import { profilePath } from "../lib/profiling.ts";
import { renderIsolates, summarizeIsolate } from "../lib/isolate-summary.ts";
import { categoryOf } from "../lib/profile-categories.ts";
import { renderProfileSummary, selfTimes, summarizeProfile } from "../lib/profile-summary.ts";
import type { CategorySummary, ProfileSummary } from "../lib/profile-summary.ts";
import type { CallFrame, CpuProfile } from "../lib/cpu-profile.ts";

const frame = (functionName: string, url = "", lineNumber = -1): CallFrame => ({ functionName, url, lineNumber, columnNumber: 0, scriptId: "0" });

/**
 * A report RPC in miniature: the scheduler object's method parses rows with zod (from the store), clones the
 * state, runs the machine (which calls an unnamed native), and writes with sql.exec; plus GC and (program).
 */
function reportProfile(): CpuProfile {
  const nodes = [
    { id: 1, callFrame: frame("(root)"), children: [2, 3, 4] },
    { id: 2, callFrame: frame("(program)") },
    { id: 3, callFrame: frame("(garbage collector)") },
    { id: 4, callFrame: frame("report", "src/workflow/object.ts", 99), children: [5, 7, 8, 10] },
    { id: 5, callFrame: frame("readSteps", "src/workflow/store.ts", 41), children: [6] },
    { id: 6, callFrame: frame("_parse", "node_modules/zod/v4/core/schemas.js", 9) },
    { id: 7, callFrame: frame("structuredClone") },
    { id: 8, callFrame: frame("transition", "src/domain/machine/index.ts", 19), children: [9] },
    { id: 9, callFrame: frame("") },
    { id: 10, callFrame: frame("exec") },
  ];
  // One sample per entry, 1 ms apart: program 2, gc 1, report 2, store 1, zod 3, clone 2, machine 1 + 1 native, exec 1.
  const samples = [2, 2, 3, 4, 4, 5, 6, 6, 6, 7, 7, 8, 9, 10];
  return { nodes, startTime: 0, endTime: (samples.length + 1) * 1000, samples, timeDeltas: samples.map(() => 1000) };
}

const byKey = (summary: ProfileSummary): Partial<Record<string, CategorySummary>> => Object.fromEntries(summary.categories.map((category) => [category.key, category]));

describe("selfTimes", () => {
  it("counts each sample as one interval, so a gap with no samples (the isolate not entered) goes to no function", () => {
    const profile = {
      nodes: [{ id: 1, callFrame: frame("(root)"), children: [2, 3] }, { id: 2, callFrame: frame("a", "src/a.ts", 0) }, { id: 3, callFrame: frame("b", "src/b.ts", 0) }],
      startTime: 0, endTime: 13_000, samples: [2, 3, 2, 3, 2], timeDeltas: [0, 1000, 1000, 9000, 1000],
    };
    const { self, intervalUs } = selfTimes(profile);
    assert.equal(intervalUs, 1000);
    assert.equal(self.get(2), 3000);
    assert.equal(self.get(3), 2000);
  });

  it("spreads a profile's span over its hit counts when it has no samples", () => {
    const profile = { nodes: [{ id: 1, callFrame: frame("a", "src/a.ts", 0), hitCount: 3 }, { id: 2, callFrame: frame("b", "src/b.ts", 0), hitCount: 1 }], startTime: 0, endTime: 4000 };
    assert.deepEqual([...selfTimes(profile).self.values()], [3000, 1000]);
  });
});

describe("categoryOf", () => {
  it("takes the innermost frame a category claims, passing over natives no category names", () => {
    assert.equal(categoryOf([frame(""), frame("transition", "src/domain/machine/index.ts", 1)]).key, "machine");
    assert.equal(categoryOf([frame("_parse", "node_modules/zod/v4/core/schemas.js", 1), frame("readSteps", "src/workflow/store.ts", 1)]).key, "zod");
    assert.equal(categoryOf([frame("stringify"), frame("appendHistory", "src/workflow/store.ts", 1)]).key, "json");
    assert.equal(categoryOf([frame("sign"), frame("mintToken", "src/domain/security/task-token.ts", 1)]).key, "crypto");
    assert.equal(categoryOf([frame("signTaskToken", "src/domain/security/task-token.ts", 41)]).key, "crypto");
    assert.equal(categoryOf([frame("dispatch", "node_modules/hono/dist/compose.js", 1)]).key, "hono");
    assert.equal(categoryOf([frame("call", "src/workflow/client.ts", 64), frame("take", "src/agents/agent-host.ts", 23)]).key, "rpc");
  });

  it("puts a stack of nothing but runtime built-ins under the runtime", () => {
    assert.equal(categoryOf([frame("pipeTo", "node-internal:streams"), frame(""), frame("(root)")]).key, "runtime");
  });

  it("knows GC, (idle) and (program) by the leaf alone", () => {
    assert.equal(categoryOf([frame("(garbage collector)"), frame("(root)")]).key, "gc");
    assert.equal(categoryOf([frame("(program)"), frame("(root)")]).key, "program");
  });
});

describe("summarizeProfile", () => {
  const summary = summarizeProfile(reportProfile(), { steps: 2, top: 3 });

  it("counts the time the isolate was entered, and as busy only its own JavaScript, natives and GC", () => {
    assert.equal(summary.spanMs, 15);
    assert.equal(summary.sampledMs, 14);
    assert.equal(summary.busyMs, 12);
  });

  it("groups self time into categories, per step and as a share of the busy time", () => {
    const categories = byKey(summary);
    assert.equal(categories.zod?.ms, 3);
    assert.equal(categories.sql?.ms, 1 + 1, "the store's own code and sql.exec");
    assert.equal(categories.clone?.ms, 2);
    assert.equal(categories.machine?.ms, 2, "the machine and the unnamed native it called");
    assert.equal(categories.scheduler?.ms, 2);
    assert.equal(categories.gc?.ms, 1);
    assert.equal(categories.program?.ms, 2);
    assert.equal(categories.zod?.msPerStep, 1.5);
    assert.equal(categories.zod?.pct, 25);
    assert.equal(categories.program?.busy, false);
    assert.equal(summary.categories[0]?.key, "zod", "largest first");
  });

  it("names the code of ours that asked for a mechanism's time", () => {
    assert.deepEqual(byKey(summary).zod?.callers, [{ label: "readSteps src/workflow/store.ts:42 ← report src/workflow/object.ts:100", ms: 3 }]);
    assert.deepEqual(byKey(summary).clone?.callers, [{ label: "report src/workflow/object.ts:100", ms: 2 }]);
  });

  it("lists the top functions by self time with their file and 1-based line", () => {
    assert.deepEqual(summary.functions.map((fn) => [fn.name, fn.url, fn.line, fn.ms, fn.category]), [
      ["_parse", "node_modules/zod/v4/core/schemas.js", 10, 3, "zod"],
      ["(program)", "", undefined, 2, "program"],
      ["report", "src/workflow/object.ts", 100, 2, "scheduler"],
    ]);
  });

  it("ranks the functions of ours by total time, counting what they called", () => {
    assert.deepEqual(summary.ours.map((fn) => [fn.name, fn.line, fn.ms]), [
      ["report", 100, 11],
      ["readSteps", 42, 4],
      ["transition", 20, 2],
    ]);
  });

  it("renders its tables as Markdown", () => {
    const markdown = renderProfileSummary(summary, { title: "tiny" });
    assert.match(markdown, /^\*\*tiny\*\*: the isolate was entered 14 ms of the 15 ms profiled \(samples every 1\.00 ms\), 12 ms of it .*: 6\.000 ms per step over 2 steps\./);
    assert.match(markdown, /\| zod parsing; from readSteps src\/workflow\/store\.ts:42 ← report src\/workflow\/object\.ts:100 \(3 ms\) \| 3 \| 1\.500 \| 25\.0 \|/);
    assert.match(markdown, /\| _parse `node_modules\/zod\/v4\/core\/schemas\.js:10` \| zod \| 3 \| 1\.500 \| 25\.0 \|/);
  });
});

describe("summarizeIsolate and renderIsolates", () => {
  it("counts a sparsely sampled isolate at the interval it is given, and says what no isolate's JavaScript accounts for", () => {
    const broker = {
      nodes: [{ id: 1, callFrame: frame("(root)"), children: [2, 3, 4] }, { id: 2, callFrame: frame("flush", "broker.worker.js", 9) }, { id: 3, callFrame: frame("(program)") }, { id: 4, callFrame: frame("(idle)") }],
      // Three samples far apart: their own median gap (40 ms) says nothing about the interval.
      startTime: 0, endTime: 100_000, samples: [2, 3, 4], timeDeltas: [10_000, 40_000, 40_000],
    };
    const isolates = [summarizeIsolate("queues:queue", broker, { intervalUs: 1000 }), summarizeIsolate("core:user:shepherd", reportProfile())];
    assert.deepEqual(isolates[0], { id: "queues:queue", enteredMs: 2, busyMs: 1, programMs: 1, top: [{ label: "flush broker.worker.js:10", ms: 1 }] });
    assert.equal(isolates[1]?.busyMs, 12);
    const markdown = renderIsolates(isolates, { steps: 2, runtimeMainThreadMs: 20 });
    assert.match(markdown, /\| core:user:shepherd \| 7\.000 \| 6\.000 \| 1\.000 \| _parse/);
    assert.match(markdown, /\| … less all isolates' JS \+ GC: native work outside JavaScript \| 3\.500 \|/);
  });
});

describe("mapProfileToSources", () => {
  it("moves frames of the bundle to their sources, relative to the app or from node_modules on", () => {
    const root = mkdtempSync(join(tmpdir(), "profile-sources-"));
    try {
      const app = join(root, "app");
      const bundleDir = join(app, ".wrangler", "tmp", "dev-1");
      mkdirSync(bundleDir, { recursive: true });
      const bundle = join(bundleDir, "index.js");
      writeFileSync(bundle, "a();\nfunction readSteps() {}\nfunction parse() {}\n//# sourceMappingURL=index.js.map\n");
      // Line 1 → store.ts line 10 (0-based 9); line 2 → the dependency's first line.
      writeFileSync(`${bundle}.map`, JSON.stringify({
        version: 3, names: [], mappings: "AAAA;AASA;ACTA",
        sources: ["../../../src/workflow/store.ts", "../../../../../elsewhere/node_modules/zod/v4/core/schemas.js"],
      }));
      // wrangler dev names the bundle by its module name alone; a file: URL works too.
      const url = "index.js";
      const profile = { nodes: [
        { id: 1, callFrame: { ...frame("readSteps", url, 1), columnNumber: 9 } },
        { id: 2, callFrame: { ...frame("parse", pathToFileURL(bundle).href, 2), columnNumber: 9 } },
        { id: 3, callFrame: frame("exec") },
      ] };
      assert.deepEqual(mapProfileToSources(profile, { appDir: app }), { bundles: 1, mapped: 2, unmapped: 0 });
      assert.deepEqual(profile.nodes.map((node) => [node.callFrame.url, node.callFrame.lineNumber]), [
        ["src/workflow/store.ts", 9],
        ["node_modules/zod/v4/core/schemas.js", 0],
        ["", -1],
      ]);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});

describe("profilePath", () => {
  it("keeps the asked name for one profiled measurement and numbers several", () => {
    assert.equal(profilePath("out/w1000.cpuprofile", { caseName: "throughput-1000", rep: 1, several: false }), "out/w1000.cpuprofile");
    assert.equal(profilePath("out/w.cpuprofile", { caseName: "throughput-200", rep: 2, several: true }), "out/w-throughput-200-2.cpuprofile");
  });
});
