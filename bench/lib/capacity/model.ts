// The capacity calculator's arithmetic (Little's law and per-component limits): what a target load needs
// from each Cloudflare component, given the per-step costs the bench measured. Pure: inputs in, figures out.
import { Buffer } from "node:buffer";
import { DEFAULTS, LIMITS } from "./limits.ts";
import type { CapacityInputs, MeasuredCosts } from "./limits.ts";

/** What the load implies before any component is looked at. */
export interface Derived {
  stepsPerSec: number;
  attemptsPerSec: number;
  /** Mean workflow lifetime (Little's law). */
  workflowSeconds: number;
  meanRemoteMs: number;
  heartbeatsPerAttempt: number;
}

export type Capacity = ReturnType<typeof simulate>;

export function simulate(input: Partial<CapacityInputs>, costs: MeasuredCosts) {
  const p: CapacityInputs = { ...DEFAULTS, ...input };
  const cpuMsPerStep = costs.cpuMsPerStep ?? 10;
  const d = derive(p);
  const messagesPerSec = p.startsPerSec * (1 + p.stepsPerWorkflow * p.retryRate);
  return {
    inputs: p,
    derived: d,
    durableObjects: durableObjects(p, d, costs, cpuMsPerStep),
    queues: queues(p, messagesPerSec),
    agentHosts: agentHosts(p, d, messagesPerSec),
    d1: d1Index(p),
    workers: workers(p, d, costs, cpuMsPerStep),
  };
}

function derive(p: CapacityInputs): Derived {
  const stepsPerSec = p.startsPerSec * p.stepsPerWorkflow;
  const meanRemoteMs = (1 - p.slowFraction) * p.remoteMs + p.slowFraction * p.slowMs;
  return {
    stepsPerSec,
    attemptsPerSec: stepsPerSec * (1 + p.retryRate),
    workflowSeconds: p.inFlight / p.startsPerSec, // Little's law
    meanRemoteMs,
    heartbeatsPerAttempt: Math.floor(meanRemoteMs / Math.max(1, Math.floor(p.heartbeatMs / 3))),
  };
}

/**
 * Durable Objects: one per workflow. Requests: start, one claim through the queue (eager dispatch claims the
 * rest with the report), per attempt a report and heartbeats, and the clients' reads.
 */
function durableObjects(p: CapacityInputs, d: Derived, costs: MeasuredCosts, cpuMsPerStep: number) {
  const requestsPerWorkflow = 2 + p.stepsPerWorkflow * (1 + p.retryRate) * (1 + d.heartbeatsPerAttempt) + p.readsPerWorkflow;
  // The bench's CPU per step covers about two object requests plus the agent and front door: an upper bound per request.
  const doCpuMsPerRequest = cpuMsPerStep / 2;
  const objectRequestsPerSecCeiling = Math.min(LIMITS.doRequestsPerSecPerObject, 1000 / doCpuMsPerRequest);
  return {
    objects: p.inFlight,
    requestsPerSec: p.startsPerSec * requestsPerWorkflow,
    requestsPerWorkflow,
    sequentialWorkflowPeakRps: (2 * 1000) / Math.max(1, p.remoteMs), // two requests per step, one step at a time
    objectRequestsPerSecCeiling,
    fanOutStepsPerSecCeiling: objectRequestsPerSecCeiling / 2,
    sqlRowsWrittenPerSec: costs.rowsWrittenPerStep === undefined ? undefined : d.stepsPerSec * costs.rowsWrittenPerStep,
    alarmWritesPerSec: costs.alarmWritesPerStep === undefined ? undefined : d.stepsPerSec * costs.alarmWritesPerStep,
    idleRowsWrittenPerSec: costs.idleRowsWrittenPerMin === undefined ? undefined : (p.inFlight * costs.idleRowsWrittenPerMin) / 60,
  };
}

/**
 * Queues: eager dispatch sends only a workflow's first attempts and its retries through the queue; the
 * consumer holds a message just for the claim, then an AgentHost object makes the remote call.
 */
function queues(p: CapacityInputs, messagesPerSec: number) {
  const queuesForRate = Math.ceil(messagesPerSec / (LIMITS.queueMessagesPerSec * p.headroom));
  const batchHoldMs = p.claimMs;
  const invocationsBusy = (messagesPerSec / p.batchSize) * (batchHoldMs / 1000);
  const queuesForConcurrency = Math.ceil(invocationsBusy / (LIMITS.queueConsumerConcurrency * p.headroom));
  return {
    messagesPerSec,
    largestMessageBytes: largestTaskMessageBytes(),
    queuesForRate,
    batchHoldMs,
    invocationsBusy,
    queuesForConcurrency,
    queuesNeeded: Math.max(queuesForRate, queuesForConcurrency),
    configured: p.taskQueues,
    bound: p.taskQueuesBound,
  };
}

/** Agent hosts: every attempt's remote call is open in one of them for its duration (Little's law). */
function agentHosts(p: CapacityInputs, d: Derived, messagesPerSec: number) {
  const callsInFlight = d.attemptsPerSec * (d.meanRemoteMs / 1000);
  const agentHostsNeeded = Math.ceil(callsInFlight / (p.callsPerAgentHost * p.headroom));
  return { callsInFlight, agentHostsNeeded, configured: p.agentHosts, requestsPerSecPerHost: messagesPerSec / Math.max(p.agentHosts, agentHostsNeeded) };
}

/** D1 index: single writer per database; rows kept for the retention window. */
function d1Index(p: CapacityInputs) {
  const indexWritesPerSec = p.startsPerSec * p.indexWritesPerWorkflow;
  const writesPerDb = (1000 / p.d1WriteMs) * p.headroom;
  const shardsForWrites = Math.ceil(indexWritesPerSec / writesPerDb);
  const indexRows = p.startsPerSec * 86_400 * p.indexRetentionDays + p.inFlight;
  const indexBytes = indexRows * p.indexRowBytes;
  const shardsForSize = Math.ceil(indexBytes / (LIMITS.d1DatabaseBytes * p.headroom));
  return {
    indexWritesPerSec,
    writesPerDb,
    shardsForWrites,
    indexRows,
    indexBytes,
    shardsForSize,
    shardsNeeded: Math.max(shardsForWrites, shardsForSize),
    configured: p.indexShards,
    bound: p.indexShardsBound,
  };
}

/** Workers CPU across the service, and what one consumer invocation uses. */
function workers(p: CapacityInputs, d: Derived, costs: MeasuredCosts, cpuMsPerStep: number) {
  const cpuSecondsPerSec = (d.stepsPerSec * cpuMsPerStep + p.startsPerSec * p.readsPerWorkflow * (costs.cpuMsPerStatusRead ?? 5)) / 1000;
  return { cpuSecondsPerSec, cpuMsPerStep, subrequestsPerBatch: p.batchSize * 2 };
}

/** A queue message as src/workflow/deliveries/tasks.ts builds it, at the longest ids the API accepts. */
function largestTaskMessageBytes(): number {
  const id = "x".repeat(128);
  const payload = Buffer.from(JSON.stringify([id, id, id, 100])).toString("base64url");
  const token = `${payload}.${"s".repeat(43)}`;
  // ~100 bytes of queue metadata count towards the limit too (Queues limits, footnote 1).
  return Buffer.byteLength(JSON.stringify({ tenant: id, workflowId: id, stepId: id, attempt: 100, kind: "compensation", token })) + 100;
}
