// The bill's arithmetic: counts per step priced from the published lists, in dollars per million steps, for an
// engine on Durable Objects, for Cloudflare Workflows, and for the peers.
// Plain Node (the bench is a Node tool, outside the Workers test projects): `node --test bench/test/*.test.ts`.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { durableObjectBill, gbSeconds, peerPrices, totalUsd, workflowsBill } from "../lib/bill/model.ts";
import type { StepCounts } from "../lib/bill/model.ts";
import { perMillion, PRICE_LIST } from "../lib/bill/prices.ts";

const nothing: StepCounts = {
  workerRequests: 0, doRequests: 0, doActiveMs: 0, sqliteRowsRead: 0, sqliteRowsWritten: 0,
  d1RowsRead: 0, d1RowsWritten: 0, queueSends: 0, cpuMs: 0, workflowInvocations: 0,
};
const item = (lines: ReturnType<typeof durableObjectBill>, name: string): number | undefined => lines.find((line) => line.item.startsWith(name))?.usdPerMillionSteps;
const close = (actual: number | undefined, expected: number): void => assert.ok(actual !== undefined && Math.abs(actual - expected) < 1e-9, `${actual} ≠ ${expected}`);

describe("perMillion", () => {
  it("prices a count per step at the list's rate per million", () => {
    close(perMillion(11, { usd: 1, per: 1e6, unit: "rows" }), 11);
    close(perMillion(0.2, { usd: 0.3, per: 1e6, unit: "requests" }), 0.06);
  });
});

describe("durableObjectBill", () => {
  it("bills a row written a dollar per million, wherever it was written", () => {
    const lines = durableObjectBill({ ...nothing, sqliteRowsWritten: 11, d1RowsWritten: 2 });
    close(item(lines, "SQLite rows written"), 11);
    close(item(lines, "D1 rows written"), 2);
    close(totalUsd(lines), 13);
  });

  it("bills an object's active wall time as 128 MB of duration, and a queue message as three operations", () => {
    close(gbSeconds(2000), 0.256);
    const lines = durableObjectBill({ ...nothing, doActiveMs: 2000, queueSends: 1 });
    close(item(lines, "Durable Object duration"), 0.256 * 12.5);
    close(item(lines, "Queue operations"), 3 * 0.4);
  });

  it("bills requests and CPU at their own rates, and nothing for what was not used", () => {
    const lines = durableObjectBill({ ...nothing, doRequests: 2, workerRequests: 1, cpuMs: 5 });
    close(item(lines, "Durable Object requests"), 0.3);
    close(item(lines, "Worker requests"), 0.3);
    close(item(lines, "CPU ms"), 0.1);
    close(totalUsd(durableObjectBill(nothing)), 0);
  });
});

describe("workflowsBill", () => {
  it("bills only requests (Worker requests and invocations) and CPU, however many rows its engine wrote", () => {
    const lines = workflowsBill({ ...nothing, workerRequests: 0.2, workflowInvocations: 0.2, cpuMs: 5, sqliteRowsWritten: 40, doRequests: 9 });
    assert.equal(lines.length, 2);
    close(totalUsd(lines), 0.4 * 0.3 + 5 * 0.02);
  });
});

describe("peerPrices", () => {
  it("prices Step Functions Standard per transition and Temporal Cloud per Action, the workflow's start shared by its steps", () => {
    const [stepFunctions, temporalFirst, temporalLast] = peerPrices(5);
    close(stepFunctions?.usdPerMillionSteps, 25);
    close(temporalFirst?.usdPerMillionSteps, 1.2 * 50);
    close(temporalLast?.usdPerMillionSteps, 1.2 * 25);
  });
});

describe("the price list", () => {
  it("names the page and the day each price was read", () => {
    for (const price of PRICE_LIST) {
      assert.match(price.source.page, /^https:\/\//, price.unit);
      assert.match(price.source.read, /^\d{4}-\d{2}-\d{2}$/, price.unit);
    }
  });
});
