// The capacity calculator's inputs: the platform limits cited in docs/capacity.md, and the load and the
// assumptions it is run with unless told otherwise.

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

export const DEFAULTS = {
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
  /** Index writes per workflow: start and end (written on status changes only, src/domain/machine/index-entry.ts). */
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

/** The load and the assumptions of one calculation. */
export type CapacityInputs = typeof DEFAULTS;

/** The Shepherd figures the bench measured (each undefined when that case did not run), and where they came from. */
export interface MeasuredCosts {
  source?: string;
  cpuMsPerStep?: number;
  cpuMsPerStatusRead?: number;
  sqlCallsPerStep?: number;
  rowsWrittenPerStep?: number;
  alarmWritesPerStep?: number;
  idleRowsWrittenPerMin?: number;
}
