// Capacity calculator: what a target load needs from each Cloudflare component, from the per-step costs
// `npm run bench` measured (bench/results/latest.json) and the platform limits cited in docs/capacity.md.
//
//   node bench/capacity-sim.ts                       # 1,000,000 in flight, 10,000 starts/s
//   node bench/capacity-sim.ts --starts 2000 --remote-ms 50 --json
//   node bench/capacity-sim.ts --write-doc           # refresh the generated block of docs/capacity.md
//
// It is arithmetic (Little's law and per-component limits), not a load test: every input it did not measure
// is a named assumption, printed with the result so it can be challenged.
/* global process, console, URL */
import { Buffer } from "node:buffer";
import { existsSync, readFileSync } from "node:fs";
import { relative } from "node:path";
import { fileURLToPath } from "node:url";
import { flagSpec, readFlags } from "../scripts/lib/cli.ts";
import { replaceMarkedSection } from "../scripts/lib/output-files.ts";

const repo = fileURLToPath(new URL("..", import.meta.url));

/** Platform limits, as cited (with sources) in docs/capacity.md. */
export const LIMITS = {
  doRequestsPerSecPerObject: 1000, // soft limit per Durable Object
  queueMessagesPerSec: 5000, // per queue
  queueMessageBytes: 128_000,
  queueSendBatchMessages: 100,
  queueSendBatchBytes: 256_000,
  queueConsumerConcurrency: 250, // concurrent consumer invocations per queue (push)
  queueConsumerWallMs: 15 * 60_000,
  queuesPerAccount: 10_000,
  connectionsPerInvocation: 6, // simultaneous outgoing connections (fetch) per invocation
  subrequestsPerInvocation: 1000, // the lower of the figures the stored docs give (older page: 1,000; newer: 10,000)
  d1QueriesPerInvocation: 1000,
  d1DatabaseBytes: 10e9,
  d1DatabasesPerAccount: 50_000,
  workerCpuMsPerInvocation: 30_000, // default; configurable to 5 min
};

const DEFAULTS = {
  inFlight: 1_000_000,
  startsPerSec: 10_000,
  stepsPerWorkflow: 5,
  /** Mean time an agent holds a synchronous remote call, ms (assumed). */
  remoteMs: 200,
  /** Share of steps that call a slow remote, and how slow (the bench's mixed case: 10 % at 5 s). */
  slowFraction: 0.1,
  slowMs: 5000,
  /** Attempts that fail and are retried, as a share of steps (assumed). */
  retryRate: 0.02,
  /** Status reads by clients per workflow (assumed). */
  readsPerWorkflow: 2,
  heartbeatMs: 30_000,
  batchSize: 10, // wrangler.toml max_batch_size
  /** How long a consumer holds a message: the claim RPC and the hand-off to an agent host, ms (assumed). */
  claimMs: 20,
  /** Remote calls one AgentHost object keeps in flight at once (assumed; see docs/capacity.md). */
  callsPerAgentHost: 100,
  /** AgentHost objects the code spreads attempts over: the AGENT_HOST_SHARDS setting's default (src/config.ts). */
  agentHosts: 64,
  /** Task queues the configuration uses and binds (TASK_QUEUE_SHARDS, TASKS ...): see taskQueuesConfigured. */
  taskQueues: 1,
  taskQueuesBound: 1,
  /** D1 databases the index uses and binds (INDEX_SHARDS, DB ...): see indexShardsConfigured. */
  indexShards: 1,
  indexShardsBound: 1,
  /** Index writes per workflow: start and end (written on status changes only, src/domain/index-entry.ts). */
  indexWritesPerWorkflow: 2,
  /** D1 time per index upsert, ms: "several milliseconds" for writes per the D1 docs (assumed value). */
  d1WriteMs: 3,
  /** Bytes per index row with its three secondary indexes (assumed). */
  indexRowBytes: 400,
  /** How long ended workflows stay listable in the index (assumed). */
  indexRetentionDays: 7,
  /** Run every shared component at this share of its limit. */
  headroom: 0.7,
};

/** The Shepherd figures the bench measured, or undefined when that case did not run. */
function measured(resultsPath) {
  if (!existsSync(resultsPath)) return {};
  const results = JSON.parse(readFileSync(resultsPath, "utf8"));
  const shepherd = results.engines?.shepherd ?? {};
  const medianOf = (caseName, key) => {
    const runs = shepherd[caseName];
    if (!Array.isArray(runs)) return undefined;
    const values = runs.map((run) => run[key]).filter(Number.isFinite).sort((a, b) => a - b);
    return values.length ? values[Math.floor((values.length - 1) / 2)] : undefined;
  };
  const largest = Object.keys(shepherd).filter((name) => name.startsWith("throughput-")).sort((a, b) => Number(b.split("-")[1]) - Number(a.split("-")[1]))[0];
  return {
    source: `${relative(repo, resultsPath) || resultsPath} (${results.meta?.date ?? "undated"})`,
    cpuMsPerStep: largest && medianOf(largest, "cpuMsPerStep"),
    cpuMsPerStatusRead: largest && medianOf(largest, "cpuMsPerStatusRead"),
    sqlCallsPerStep: medianOf("supervisor", "sqlCallsPerStep"),
    rowsWrittenPerStep: medianOf("supervisor", "rowsWrittenPerStep"),
    alarmWritesPerStep: medianOf("supervisor", "alarmWritesPerStep"),
    // A negative idle figure means the object was evicted (its in-memory counters reset) during the watch.
    idleRowsWrittenPerMin: Math.max(0, medianOf("supervisor", "idleRowsWrittenPerMin") ?? 0),
  };
}

/** A setting's raw value in wrangler.toml's [vars], or undefined. */
function varOf(tomlText, name) {
  const vars = /^\[vars\]\s*$([\s\S]*?)(?=^\[)/m.exec(tomlText)?.[1] ?? "";
  return new RegExp(`^\\s*${name}\\s*=\\s*"?([^"\\s#]*)"?`, "m").exec(vars)?.[1];
}

/**
 * A sharded binding's count as src/config.ts counts it: the setting `setting` from [vars] (default 1), never more
 * than the bindings `base`, `base_1` ... bound without a gap.
 */
function shardsConfigured(tomlText, setting, base) {
  const wanted = Number(varOf(tomlText, setting));
  const bindings = new Set([...tomlText.matchAll(new RegExp(`^\\s*binding\\s*=\\s*"(${base}(?:_\\d+)?)"`, "gm"))].map((match) => match[1]));
  let bound = 1;
  while (bindings.has(`${base}_${bound}`)) bound += 1;
  return { configured: Number.isInteger(wanted) && wanted >= 1 ? Math.min(wanted, bound) : 1, bound };
}

/**
 * How many task queues wrangler.toml's configuration uses, as src/config.ts `taskQueueShards` counts them:
 * TASK_QUEUE_SHARDS from [vars] (default 1), never more than the TASKS, TASKS_1 ... producers bound there.
 */
export function taskQueuesConfigured(tomlText) {
  const { configured, bound } = shardsConfigured(tomlText, "TASK_QUEUE_SHARDS", "TASKS");
  return { taskQueues: configured, taskQueuesBound: bound };
}

/**
 * How many D1 databases the workflow index uses, as src/config.ts `indexShards` counts them: INDEX_SHARDS from
 * [vars] (default 1), never more than the DB, DB_1 ... databases bound there.
 */
export function indexShardsConfigured(tomlText) {
  const { configured, bound } = shardsConfigured(tomlText, "INDEX_SHARDS", "DB");
  return { indexShards: configured, indexShardsBound: bound };
}

/** A queue message as src/workflow/object.ts builds it, at the longest ids the API accepts. */
function largestTaskMessageBytes() {
  const id = "x".repeat(128);
  const payload = Buffer.from(JSON.stringify([id, id, id, 100])).toString("base64url");
  const token = `${payload}.${"s".repeat(43)}`;
  // ~100 bytes of queue metadata count towards the limit too (Queues limits, footnote 1).
  return Buffer.byteLength(JSON.stringify({ tenant: id, workflowId: id, stepId: id, attempt: 100, kind: "compensation", token })) + 100;
}

export function simulate(input, costs) {
  const p = { ...DEFAULTS, ...input };
  const cpuMsPerStep = costs.cpuMsPerStep ?? 10;
  const stepsPerSec = p.startsPerSec * p.stepsPerWorkflow;
  const attemptsPerSec = stepsPerSec * (1 + p.retryRate);
  const workflowSeconds = p.inFlight / p.startsPerSec; // Little's law
  const meanRemoteMs = (1 - p.slowFraction) * p.remoteMs + p.slowFraction * p.slowMs;
  const heartbeatsPerAttempt = Math.floor(meanRemoteMs / Math.max(1, Math.floor(p.heartbeatMs / 3)));

  // Durable Objects: one per workflow. Requests: start, one claim through the queue (eager dispatch claims the
  // rest with the report), per attempt a report and heartbeats, and the clients' reads.
  const doRequestsPerWorkflow = 2 + p.stepsPerWorkflow * (1 + p.retryRate) * (1 + heartbeatsPerAttempt) + p.readsPerWorkflow;
  const doRequestsPerSec = p.startsPerSec * doRequestsPerWorkflow;
  // The bench's CPU per step covers about two object requests plus the agent and front door: an upper bound per request.
  const doCpuMsPerRequest = cpuMsPerStep / 2;
  const objectRequestsPerSecCeiling = Math.min(LIMITS.doRequestsPerSecPerObject, 1000 / doCpuMsPerRequest);

  // Queues: eager dispatch sends only a workflow's first attempts and its retries through the queue; the
  // consumer holds a message just for the claim, then an AgentHost object makes the remote call.
  const messagesPerSec = p.startsPerSec * (1 + p.stepsPerWorkflow * p.retryRate);
  const queuesForRate = Math.ceil(messagesPerSec / (LIMITS.queueMessagesPerSec * p.headroom));
  const batchHoldMs = p.claimMs;
  const invocationsBusy = (messagesPerSec / p.batchSize) * (batchHoldMs / 1000);
  const queuesForConcurrency = Math.ceil(invocationsBusy / (LIMITS.queueConsumerConcurrency * p.headroom));
  // Agent hosts: every attempt's remote call is open in one of them for its duration (Little's law).
  const callsInFlight = attemptsPerSec * (meanRemoteMs / 1000);
  const agentHostsNeeded = Math.ceil(callsInFlight / (p.callsPerAgentHost * p.headroom));
  const agentHostRequestsPerSec = messagesPerSec / Math.max(p.agentHosts, agentHostsNeeded);

  // D1 index: single writer per database; rows kept for the retention window.
  const indexWritesPerSec = p.startsPerSec * p.indexWritesPerWorkflow;
  const writesPerDb = (1000 / p.d1WriteMs) * p.headroom;
  const shardsForWrites = Math.ceil(indexWritesPerSec / writesPerDb);
  const indexRows = p.startsPerSec * 86_400 * p.indexRetentionDays + p.inFlight;
  const indexBytes = indexRows * p.indexRowBytes;
  const shardsForSize = Math.ceil(indexBytes / (LIMITS.d1DatabaseBytes * p.headroom));

  // Workers CPU across the service, and what one consumer invocation uses.
  const cpuSecondsPerSec = (stepsPerSec * cpuMsPerStep + p.startsPerSec * p.readsPerWorkflow * (costs.cpuMsPerStatusRead ?? 5)) / 1000;
  const subrequestsPerBatch = p.batchSize * 2;

  return {
    inputs: p,
    derived: { stepsPerSec, attemptsPerSec, workflowSeconds, meanRemoteMs, heartbeatsPerAttempt },
    durableObjects: {
      objects: p.inFlight,
      requestsPerSec: doRequestsPerSec,
      requestsPerWorkflow: doRequestsPerWorkflow,
      sequentialWorkflowPeakRps: (2 * 1000) / Math.max(1, p.remoteMs), // two requests per step, one step at a time
      objectRequestsPerSecCeiling,
      fanOutStepsPerSecCeiling: objectRequestsPerSecCeiling / 2,
      sqlRowsWrittenPerSec: costs.rowsWrittenPerStep === undefined ? undefined : stepsPerSec * costs.rowsWrittenPerStep,
      alarmWritesPerSec: costs.alarmWritesPerStep === undefined ? undefined : stepsPerSec * costs.alarmWritesPerStep,
      idleRowsWrittenPerSec: costs.idleRowsWrittenPerMin === undefined ? undefined : (p.inFlight * costs.idleRowsWrittenPerMin) / 60,
    },
    queues: {
      messagesPerSec,
      largestMessageBytes: largestTaskMessageBytes(),
      queuesForRate,
      batchHoldMs,
      invocationsBusy,
      queuesForConcurrency,
      queuesNeeded: Math.max(queuesForRate, queuesForConcurrency),
      configured: p.taskQueues,
      bound: p.taskQueuesBound,
    },
    agentHosts: { callsInFlight, agentHostsNeeded, configured: p.agentHosts, requestsPerSecPerHost: agentHostRequestsPerSec },
    d1: {
      indexWritesPerSec,
      writesPerDb,
      shardsForWrites,
      indexRows,
      indexBytes,
      shardsForSize,
      shardsNeeded: Math.max(shardsForWrites, shardsForSize),
      configured: p.indexShards,
      bound: p.indexShardsBound,
    },
    workers: { cpuSecondsPerSec, cpuMsPerStep, subrequestsPerBatch },
  };
}

const fmt = (value, digits = 0) =>
  value === undefined ? "n/a" : Number(value).toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: 0 });

export function renderReport(result, costs) {
  const { inputs: p, derived: d, durableObjects: o, queues: q, agentHosts: a, d1, workers: w } = result;
  const m = (value, note) => (value === undefined ? `n/a (${note})` : value);
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

const BEGIN = "<!-- capacity-sim:begin (generated by `node bench/capacity-sim.ts --write-doc`) -->";
const END = "<!-- capacity-sim:end -->";

function writeDoc(report) {
  replaceMarkedSection(`${repo}docs/capacity.md`, { begin: BEGIN, end: END, section: `${BEGIN}\n\`\`\`text\n${report}\`\`\`\n${END}`, title: "# Capacity" });
}

function main() {
  const options = flagSpec({
    values: ["results", "in-flight", "starts", "steps", "remote-ms", "slow-fraction", "slow-ms", "retry-rate", "d1-write-ms", "retention-days", "calls-per-host"],
    switches: ["json", "write-doc"],
  });
  const { values } = readFlags(process.argv.slice(2), options);
  values.results ??= `${repo}bench/results/latest.json`;
  const numeric = (name) => (values[name] === undefined ? undefined : Number(values[name]));
  const input = Object.fromEntries(
    Object.entries({
      inFlight: numeric("in-flight"),
      startsPerSec: numeric("starts"),
      stepsPerWorkflow: numeric("steps"),
      remoteMs: numeric("remote-ms"),
      slowFraction: numeric("slow-fraction"),
      slowMs: numeric("slow-ms"),
      retryRate: numeric("retry-rate"),
      d1WriteMs: numeric("d1-write-ms"),
      indexRetentionDays: numeric("retention-days"),
      // e.g. 6, if an AgentHost's outgoing connections turn out to be capped like a request's (docs/capacity.md).
      callsPerAgentHost: numeric("calls-per-host"),
    }).filter(([, value]) => value !== undefined),
  );
  const toml = readFileSync(`${repo}wrangler.toml`, "utf8");
  Object.assign(input, taskQueuesConfigured(toml), indexShardsConfigured(toml));
  const costs = measured(values.results);
  const result = simulate(input, costs);
  if (values.json) {
    console.log(JSON.stringify({ costs, ...result }, null, 2));
    return;
  }
  const report = renderReport(result, costs);
  console.log(report);
  if (values["write-doc"]) {
    writeDoc(report);
    console.log("written to docs/capacity.md");
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) main();
