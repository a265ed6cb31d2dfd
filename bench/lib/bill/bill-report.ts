// The bill's tables: dollars per million steps by engine and step shape with the peers beside them, each shape's
// bill line by line (the count per step and what it costs), and what the Durable Object requests called. Printed
// with the run's tables and written into docs/cost.md (cost-doc.ts).
import type { EngineName } from "../engines/engine.ts";
import { median } from "../../../scripts/lib/stats.ts";
import { ENGINE_LABELS, figures, formatNumber } from "../figures.ts";
import type { Results } from "../results.ts";
import { STEPS_PER_WORKFLOW } from "../workload.ts";
import { STEP_SHAPES } from "./bill-case.ts";
import type { ShapeName } from "./bill-case.ts";
import { objectRequestsBy, stepCounts } from "./bill-figures.ts";
import { durableObjectBill, peerPrices, totalUsd, workflowsBill } from "./model.ts";
import type { BillLine } from "./model.ts";

/** The instant shape's goal: a tenth of Step Functions Standard. */
export const BILL_GOAL_USD = 2.5;
const ENGINES: readonly EngineName[] = ["shepherd", "floor", "workflows"];
const SHAPE_HEADINGS: Record<ShapeName, string> = { instant: "instant", slow: "2 s", callback: "202 + callback" };

/** An engine's bill for one shape: Workflows by its own price list, the engines on Durable Objects by theirs. */
export function billOf(results: Results, engine: EngineName, shape: ShapeName): BillLine[] | undefined {
  const counts = stepCounts(results, engine, shape);
  if (!counts) return undefined;
  return engine === "workflows" ? workflowsBill(counts) : durableObjectBill(counts);
}

const percent = (share: number | undefined): string => (share === undefined ? "n/a" : `${(share * 100).toFixed(share < 1 ? 1 : 0)} %`);
const usd = (value: number | undefined): string => (value === undefined ? "—" : `$${formatNumber(value)}`);
/** A count per step: three significant digits, two below 0.1 (a step's GB-s are hundredths). */
export const countText = (value: number): string => (value !== 0 && Math.abs(value) < 0.1 ? value.toPrecision(2) : formatNumber(value));
const measured = (results: Results): EngineName[] => ENGINES.filter((engine) => STEP_SHAPES.some((shape) => billOf(results, engine, shape.name)));

/** Dollars per million steps: one row per engine measured and per peer, one column per shape. */
export function renderBillSummary(results: Results): string {
  const engines = measured(results);
  if (engines.length === 0) return "";
  const lines = [`| $ per million steps | ${STEP_SHAPES.map((shape) => SHAPE_HEADINGS[shape.name]).join(" | ")} |`, `| --- |${STEP_SHAPES.map(() => " ---: |").join("")}`];
  for (const engine of engines) {
    const cells = STEP_SHAPES.map((shape) => {
      const bill = billOf(results, engine, shape.name);
      return usd(bill && totalUsd(bill));
    });
    lines.push(`| ${engine === "workflows" ? "Cloudflare Workflows" : ENGINE_LABELS[engine]} | ${cells.join(" | ")} |`);
  }
  const stepsPerWorkflow = median(figures(results.engines[engines[0]!]?.bill, "stepsPerWorkflow")) ?? STEPS_PER_WORKFLOW;
  for (const peer of peerPrices(stepsPerWorkflow)) lines.push(`| ${peer.name}; ${peer.basis} | ${STEP_SHAPES.map(() => usd(peer.usdPerMillionSteps)).join(" | ")} |`);
  return lines.join("\n");
}

/** One shape's bill, line by line: per step, the count and its dollars per million steps, for each engine measured. */
export function renderShapeBill(results: Results, shape: ShapeName): string {
  const engines = ENGINES.filter((engine) => billOf(results, engine, shape));
  if (engines.length === 0) return "";
  const bills = new Map(engines.map((engine) => [engine, billOf(results, engine, shape) ?? []]));
  const items = [...new Set([...bills.values()].flat().map((line) => line.item))];
  const lines = [`| Per step | ${engines.map((engine) => ENGINE_LABELS[engine]).join(" | ")} |`, `| --- |${engines.map(() => " ---: |").join("")}`];
  for (const item of items) {
    const cells = engines.map((engine) => {
      const line = bills.get(engine)?.find((bill) => bill.item === item);
      return line ? `${countText(line.quantity)} (${usd(line.usdPerMillionSteps)})` : "—";
    });
    lines.push(`| ${item} | ${cells.join(" | ")} |`);
  }
  lines.push(`| **$ per million steps** | ${engines.map((engine) => `**${usd(totalUsd(bills.get(engine) ?? []))}**`).join(" | ")} |`);
  lines.push(`| the remote's calls the trace store has (its counts' completeness) | ${engines.map((engine) => percent(median(figures(results.engines[engine]?.bill, `${shape}.traceCoverage`)))).join(" | ")} |`);
  return lines.join("\n");
}

/** What each engine's Durable Object requests called, per step, shape by shape. */
export function renderObjectRequests(results: Results): string {
  const lines: string[] = [];
  for (const engine of ENGINES.filter((name) => name !== "workflows")) {
    for (const shape of STEP_SHAPES) {
      const calls = objectRequestsBy(results, engine, shape.name);
      if (calls.length > 0) lines.push(`- ${ENGINE_LABELS[engine]}, ${SHAPE_HEADINGS[shape.name]}: ${calls.map(([what, count]) => `${what} ${formatNumber(count)}`).join(", ")}`);
    }
  }
  return lines.join("\n");
}

/** The goal's verdict and how Workflows' bill compares, in sentences; "" without Shepherd's instant bill. */
export function renderBillVerdict(results: Results): string {
  const total = (engine: EngineName, shape: ShapeName): number | undefined => {
    const bill = billOf(results, engine, shape);
    return bill && totalUsd(bill);
  };
  const shepherd = total("shepherd", "instant");
  if (shepherd === undefined) return "";
  const goal = shepherd <= BILL_GOAL_USD ? "within" : "over";
  const sentences = [`Shepherd's instant step costs ${usd(shepherd)} per million steps, ${goal} the goal of ${usd(BILL_GOAL_USD)}.`];
  for (const shape of STEP_SHAPES) {
    const [ours, theirs] = [total("shepherd", shape.name), total("workflows", shape.name)];
    if (ours !== undefined && theirs !== undefined && theirs > 0) sentences.push(`${SHAPE_HEADINGS[shape.name]}: Shepherd ${usd(ours)}, Cloudflare Workflows ${usd(theirs)} (${formatNumber(ours / theirs)}×).`);
  }
  return sentences.join(" ");
}
