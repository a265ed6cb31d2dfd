// The bill of one step: what a step was counted to use (trace-counts.ts, per step), priced from the published lists
// (prices.ts) in dollars per million steps, line by line. Shepherd and the floor pay for what their Durable Objects,
// D1, Queues and Worker use; Cloudflare Workflows bills only CPU time and requests; the peers bill per transition or
// Action. Pure.
import { CLOUDFLARE, DO_GB, perMillion, QUEUE_OPS_PER_MESSAGE, STEP_FUNCTIONS_STANDARD, TEMPORAL_CLOUD, WORKFLOWS } from "./prices.ts";
import type { UnitPrice } from "./prices.ts";

/** What one step used, on average over a bill run. */
export interface StepCounts {
  workerRequests: number;
  doRequests: number;
  doActiveMs: number;
  sqliteRowsRead: number;
  sqliteRowsWritten: number;
  d1RowsRead: number;
  d1RowsWritten: number;
  queueSends: number;
  /** All of workerd's CPU: more than the Worker CPU billed (an object's CPU is in its duration), the local runtime's own work included. */
  cpuMs: number;
  /** Workflows: instances created per step (each a billed invocation). */
  workflowInvocations: number;
}

/** One line of a step's bill. */
export interface BillLine {
  item: string;
  /** Per step, in the price's unit. */
  quantity: number;
  usdPerMillionSteps: number;
}

const line = (item: string, quantity: number, price: UnitPrice): BillLine => ({ item, quantity, usdPerMillionSteps: perMillion(quantity, price) });

/** GB-s of duration for `ms` of an object's active wall time. */
export const gbSeconds = (ms: number): number => (ms / 1000) * DO_GB;

/** An engine on Durable Objects (Shepherd, the floor): every unit it uses is billed. */
export function durableObjectBill(counts: StepCounts): BillLine[] {
  return [
    line("Durable Object requests", counts.doRequests, CLOUDFLARE.doRequests),
    line("Durable Object duration (GB-s)", gbSeconds(counts.doActiveMs), CLOUDFLARE.doDuration),
    line("SQLite rows written", counts.sqliteRowsWritten, CLOUDFLARE.sqliteRowsWritten),
    line("SQLite rows read", counts.sqliteRowsRead, CLOUDFLARE.sqliteRowsRead),
    line("D1 rows written", counts.d1RowsWritten, CLOUDFLARE.d1RowsWritten),
    line("D1 rows read", counts.d1RowsRead, CLOUDFLARE.d1RowsRead),
    line("Queue operations", counts.queueSends * QUEUE_OPS_PER_MESSAGE, CLOUDFLARE.queueOps),
    line("Worker requests", counts.workerRequests, CLOUDFLARE.workerRequests),
    line("CPU ms (all of workerd's)", counts.cpuMs, CLOUDFLARE.cpuMs),
  ];
}

/** Cloudflare Workflows: its engine's storage work and objects are not billed per unit; CPU time and requests are. */
export function workflowsBill(counts: StepCounts): BillLine[] {
  return [
    line("Requests (Worker requests and Workflow invocations)", counts.workerRequests + counts.workflowInvocations, WORKFLOWS.requests),
    line("CPU ms (all of workerd's)", counts.cpuMs, WORKFLOWS.cpuMs),
  ];
}

export const totalUsd = (lines: readonly BillLine[]): number => lines.reduce((sum, bill) => sum + bill.usdPerMillionSteps, 0);

/** A peer's price per million steps, from its own list, and what it counts. */
export interface PeerPrice {
  name: string;
  usdPerMillionSteps: number;
  basis: string;
}

/**
 * The peers for a workflow of `stepsPerWorkflow` steps: Step Functions Standard bills a state transition per step
 * (a Task state, waiting for a callback or not); Temporal Cloud an Action per activity started, plus one per workflow
 * started. Neither includes the compute that runs the step (a Lambda, the user's workers).
 */
export function peerPrices(stepsPerWorkflow: number): PeerPrice[] {
  const actions = 1 + 1 / stepsPerWorkflow;
  return [
    { name: "AWS Step Functions Standard", usdPerMillionSteps: perMillion(1, STEP_FUNCTIONS_STANDARD), basis: "1 state transition per step" },
    { name: "Temporal Cloud, first tier", usdPerMillionSteps: perMillion(actions, TEMPORAL_CLOUD.firstTier), basis: `${actions.toFixed(1)} Actions per step: the activity's, and the workflow start's ÷ ${stepsPerWorkflow}` },
    { name: "Temporal Cloud, 100M–200M Actions a month", usdPerMillionSteps: perMillion(actions, TEMPORAL_CLOUD.lastTier), basis: "the same Actions at the last published tier" },
  ];
}
