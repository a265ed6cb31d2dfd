// The capacity calculator's report: what the load needs from each component, with the inputs and measured
// costs it rests on, so every assumption is printed beside the result it leads to.
import { LIMITS } from "./limits.ts";
import type { MeasuredCosts } from "./limits.ts";
import type { Capacity } from "./model.ts";

const fmt = (value: number | undefined, digits = 0): string =>
  value === undefined ? "n/a" : Number(value).toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: 0 });

/** A measured figure, or why there is none. */
const m = (value: string | number | undefined, note: string): string | number => (value === undefined ? `n/a (${note})` : value);

/** What the load needs, component by component, with the inputs and the measured costs it rests on. */
export function renderReport(result: Capacity, costs: MeasuredCosts): string {
  const { inputs: p, derived: d, durableObjects: o, queues: q, agentHosts: a, d1, workers: w } = result;
  return `Target: ${fmt(p.inFlight)} workflows in flight, ${fmt(p.startsPerSec)} starts/s, ${p.stepsPerWorkflow} steps each
  → ${fmt(d.stepsPerSec)} steps/s, ${fmt(d.attemptsPerSec)} attempts/s (retry rate ${p.retryRate}); mean workflow lifetime ${fmt(d.workflowSeconds)} s (Little's law)
  remote calls: ${p.remoteMs} ms, ${p.slowFraction * 100} % at ${p.slowMs} ms (mean ${fmt(d.meanRemoteMs)} ms); ${d.heartbeatsPerAttempt} heartbeat(s) per attempt
Measured costs (${costs.source ?? "no results file: assumed values"}):
  workerd CPU per step ${m(costs.cpuMsPerStep && fmt(costs.cpuMsPerStep, 1), "assumed 10")} ms · SQL rows written per step ${m(costs.rowsWrittenPerStep && fmt(costs.rowsWrittenPerStep, 1), "no /dev counters")} · alarm writes per step ${m(costs.alarmWritesPerStep && fmt(costs.alarmWritesPerStep, 1), "no /dev counters")}

Durable Objects (one per workflow)
  objects: ${fmt(o.objects)}; requests: ${fmt(o.requestsPerSec)}/s in all (${fmt(o.requestsPerWorkflow, 1)} per workflow)
  per object: a sequential workflow peaks near ${fmt(o.sequentialWorkflowPeakRps)} req/s (limit ${fmt(LIMITS.doRequestsPerSecPerObject)}); ceiling ${fmt(o.objectRequestsPerSecCeiling)} req/s at the measured CPU
    → a fan-out can complete about ${fmt(o.fanOutStepsPerSecCeiling)} steps/s in one workflow
  storage: ${fmt(o.sqlRowsWrittenPerSec)} SQL rows written/s, ${fmt(o.alarmWritesPerSec)} alarm writes/s; idle workflows: ${fmt(o.idleRowsWrittenPerSec)} rows/s
Queues
  messages: ${fmt(q.messagesPerSec)}/s → ${q.queuesForRate} queue(s) at ${p.headroom * 100} % of ${fmt(LIMITS.queueMessagesPerSec)} msg/s
  consumers: a batch of ${p.batchSize} is held ~${fmt(q.batchHoldMs)} ms (claims only; the calls run in agent hosts) → ${fmt(q.invocationsBusy, 1)} busy invocations
    → ${q.queuesForConcurrency} queue(s) at ${p.headroom * 100} % of ${LIMITS.queueConsumerConcurrency} concurrent invocations
  needed: ${q.queuesNeeded} task queue(s), spread by hash of the workflow id; the configuration uses ${q.configured} of the ${q.bound} bound (TASK_QUEUE_SHARDS${q.configured < q.queuesNeeded ? `: raise it${q.bound < q.queuesNeeded ? ", binding queues up to TASKS_" + (q.queuesNeeded - 1) : ""}` : ""})
  largest message: ${fmt(q.largestMessageBytes)} bytes (limit ${fmt(LIMITS.queueMessageBytes)}); sendBatch ≤ ${LIMITS.queueSendBatchMessages} messages
Agent hosts (AgentHost objects)
  remote calls in flight: ${fmt(a.callsInFlight)} → ${fmt(a.agentHostsNeeded)} hosts at ${p.headroom * 100} % of ${p.callsPerAgentHost} calls each (the code has ${a.configured}: raise AGENT_HOST_SHARDS)
  hand-offs per host: ${fmt(a.requestsPerSecPerHost, 1)} req/s (limit ${fmt(LIMITS.doRequestsPerSecPerObject)})
D1 index (single writer per database)
  writes: ${fmt(d1.indexWritesPerSec)}/s; one database takes ~${fmt(d1.writesPerDb)}/s at ${p.d1WriteMs} ms per write → ${d1.shardsForWrites} shard(s)
  size: ${fmt(d1.indexRows)} rows (${p.indexRetentionDays} days of ended workflows + in flight) ≈ ${fmt(d1.indexBytes / 1e9, 1)} GB → ${d1.shardsForSize} shard(s) of ≤ 10 GB
  needed: ${d1.shardsNeeded} index shard(s), by tenant then hash of the workflow id; the configuration uses ${d1.configured} of the ${d1.bound} bound (INDEX_SHARDS${d1.configured < d1.shardsNeeded ? `: raise it${d1.bound < d1.shardsNeeded ? ", binding databases up to DB_" + (d1.shardsNeeded - 1) : ""}` : ""})
Workers
  CPU: ≈ ${fmt(w.cpuSecondsPerSec)} CPU-seconds per second across the service (local workerd figure: an upper bound)
  per consumer invocation: ~${w.subrequestsPerBatch} subrequests (a claim and a hand-off per message; limit ${LIMITS.subrequestsPerInvocation}); CPU far below ${LIMITS.workerCpuMsPerInvocation / 1000} s
`;
}

