// The bill as the run prints it and docs/cost.md carries it: dollars per million steps beside the peers, each shape's
// bill line by line, the goal's verdict, the rows written by statement, and the prices with their sources.
// Plain Node (the bench is a Node tool, outside the Workers test projects): `node --test bench/test/*.test.ts`.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { billOf, renderBillSummary, renderBillVerdict, renderShapeBill } from "../lib/bill/bill-report.ts";
import { renderCost, renderPrices } from "../lib/bill/cost-doc.ts";
import type { Outcome, Results } from "../lib/results.ts";

/** A bill outcome in which every shape has the same counts per step. */
function billOutcome(counts: Record<string, number>): Outcome {
  const outcome: Outcome = { stepsPerWorkflow: 5 };
  for (const shape of ["instant", "slow", "callback"]) {
    outcome[`${shape}.steps`] = 100;
    for (const [key, value] of Object.entries(counts)) outcome[`${shape}.${key}`] = value;
  }
  return outcome;
}

const results: Results = {
  meta: {} as Results["meta"],
  engines: {
    shepherd: {
      bill: [billOutcome({ traceCoverage: 0.985, sqliteRowsWritten: 15, d1RowsWritten: 2, doRequests: 2, doActiveMs: 20, "doRequests.report": 1, "doRequests.start": 0.2 })],
      rows: [{ "1.total": 30, "1.rows|INSERT INTO events": 8, "1.statements|INSERT INTO events": 4, "50.total": 500, "50.rows|INSERT INTO events": 260, "50.statements|INSERT INTO events": 130 }],
    },
    floor: { bill: [billOutcome({ traceCoverage: 1, sqliteRowsWritten: 1.8, doRequests: 0.4 })] },
    workflows: { bill: [billOutcome({ workerRequests: 0.2, workflowInvocations: 0.2, cpuMs: 5, sqliteRowsWritten: 40 })] },
  },
};

describe("the bill's tables", () => {
  it("price each engine by its own list: rows and requests for the engines on Durable Objects, CPU and requests for Workflows", () => {
    const summary = renderBillSummary(results);
    assert.match(summary, /\| Shepherd \| \$17\.3 \| \$17\.3 \| \$17\.3 \|/);
    assert.match(summary, /\| Floor \| \$1\.86 \|/);
    assert.match(summary, /\| Cloudflare Workflows \| \$0\.22 \|/);
    assert.match(summary, /\| AWS Step Functions Standard; 1 state transition per step \| \$25\.0 \|/);
    assert.match(summary, /\| Temporal Cloud, first tier; 1\.2 Actions per step/);
  });

  it("show each line of a shape's bill as the count per step and its dollars per million steps", () => {
    const table = renderShapeBill(results, "instant");
    assert.match(table, /^\| Per step \| Shepherd \| Floor \| Workflows \|/);
    assert.match(table, /\| SQLite rows written \| 15\.0 \(\$15\.0\) \| 1\.80 \(\$1\.80\) \| — \|/);
    assert.match(table, /\| Durable Object duration \(GB-s\) \| 0\.0026 \(\$0\.03\) \| 0\.00 \(\$0\.00\) \|/);
    assert.match(table, /\| \*\*\$ per million steps\*\* \| \*\*\$17\.3\*\* \| \*\*\$1\.86\*\* \| \*\*\$0\.22\*\* \|/);
    assert.equal(billOf(results, "shepherd", "instant")?.length, 9);
    assert.match(table, /\| the remote's calls the trace store has \(its counts' completeness\) \| 98\.5 % \| 100 % \| n\/a \|/);
  });

  it("say whether the instant step is within the goal, and how far Workflows' bill is below", () => {
    const verdict = renderBillVerdict(results);
    assert.match(verdict, /Shepherd's instant step costs \$17\.3 per million steps, over the goal of \$2\.50\./);
    assert.match(verdict, /instant: Shepherd \$17\.3, Cloudflare Workflows \$0\.22 \(78\.8×\)\./);
  });
});

describe("renderCost", () => {
  it("puts the summary, the shapes, the object requests and the rows written by statement together", () => {
    const cost = renderCost(results, { rowsSizes: [1, 5, 50], billSize: 20, concurrency: 50 });
    for (const heading of ["### Dollars per million steps", "### The bill of a step: the remote answers after 2 s", "### What the Durable Object requests called, per step", "### Where the SQLite rows written go"]) {
      assert.ok(cost.includes(heading), heading);
    }
    assert.match(cost, /- Shepherd, instant: report 1\.00, start 0\.20/);
    assert.match(cost, /\| INSERT INTO events \| 8\.00 \(4\.00\) \| 260 \(130\) \|/);
    assert.match(cost, /Shepherd: about 9\.59 rows per step and 20\.4 per workflow/);
    assert.equal(renderCost({ meta: results.meta, engines: {} }, { rowsSizes: [1], billSize: 20, concurrency: 50 }), "");
  });

  it("lists every price with its page and the day it was read", () => {
    const prices = renderPrices();
    assert.match(prices, /\| Durable Objects \| \$1 per million SQLite rows written \(each setAlarm is one\) \| https:\/\/developers\.cloudflare\.com\/durable-objects\/platform\/pricing\/ \(read 2026-11-27\) \|/);
    assert.match(prices, /\| Durable Objects \| \$0\.001 per million SQLite rows read \|/);
    assert.match(prices, /\| Durable Objects \| \$12\.50 per million GB-s/);
    assert.match(prices, /\| AWS Step Functions Standard \| \$25 per million state transitions \| https:\/\/aws\.amazon\.com\/step-functions\/pricing\//);
    assert.match(prices, /- https:\/\/developers\.cloudflare\.com\/d1\/platform\/pricing\/: the page's source in cloudflare\/cloudflare-docs/);
  });
});
