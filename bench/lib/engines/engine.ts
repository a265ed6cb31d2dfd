// What the cases see of an engine: one adapter interface over Shepherd, the Workflows baseline and the floor, each
// under its own `wrangler dev`. A case drives an engine only through these methods and reads its answers only
// in these shapes, so both engines are measured by the same code.

export type EngineName = "shepherd" | "workflows" | "floor";

/** Shepherd's retry policy; the baseline gets its nearest equivalent (toWorkflowsRetry). */
export interface RetryPolicy {
  maxAttempts: number;
  initialIntervalMs: number;
  backoffCoefficient?: number;
  jitter: number;
}

export interface StepTimeouts {
  startToCloseMs: number;
  heartbeatMs: number;
}

/** One workflow of the bench: sequential steps, each a POST to `url`. */
export interface WorkflowSpec {
  id: string;
  steps: Array<{ id: string; url: string }>;
  retry: RetryPolicy;
  timeouts: StepTimeouts;
}

/**
 * One workflow of the fan-out case: a single step over `items` items (0, 1, … N-1), each a POST to `url`.
 * Shepherd runs it as a `map` step with `maxConcurrency`; the baseline as `Promise.all` of a `step.do` per
 * item, which has no such bound. Every item's Idempotency-Key is `<id>:each:<index>`.
 */
export interface FanOutSpec {
  id: string;
  items: number;
  url: string;
  maxConcurrency: number;
  retry: RetryPolicy;
  timeouts: StepTimeouts;
}

/** The map step's id, in both engines' item keys. */
export const FAN_OUT_STEP_ID = "each";

/**
 * How long the fan-out case waits for a start's answer: one request carrying every item, which Shepherd makes
 * durable before it answers and the local Workflows engine answers only once the instance has set out its steps.
 */
export const FAN_OUT_START_TIMEOUT_MS = 120_000;

/** An engine's fan-out workflow: started, read and ended by its own calls (the baseline keeps it in another class). */
export interface FanOutApi {
  start(spec: FanOutSpec): Promise<StartResult>;
  readStatus(id: string): Promise<WorkflowStatus>;
  cancel(id: string): Promise<void>;
}

/**
 * One workflow of the pool case: sequential steps s1, s2, … each a `worker` action of `pool`, done by the
 * bench's own workers, which pull it (an engine with a pull model: Shepherd).
 */
export interface PoolWorkflowSpec {
  id: string;
  pool: string;
  steps: number;
  retry: RetryPolicy;
  timeouts: StepTimeouts;
}

/** A task as a poll hands it to a worker (only what the case reads). */
export interface PoolTask {
  token: string;
  workflowId: string;
  stepId: string;
  attempt: number;
}

/** One worker's long poll: up to `max` tasks of the pool as soon as there are any, or none after `waitMs`. */
export interface PollRequest {
  pool: string;
  workerId: string;
  waitMs: number;
  max: number;
}

/** A poll's answer: the tasks taken (none unless status is 200), and the engine's advice on a 429 or 503. */
export interface PollAnswer {
  status: number;
  tasks: PoolTask[];
  retryAfterS?: number;
  error?: string;
}

/** An engine's worker pools: worker workflows started, a worker's poll, and its report on one task. */
export interface PoolApi {
  startWorkflow(spec: PoolWorkflowSpec): Promise<StartResult>;
  /** `signal` ends a poll nobody waits for any more (the run is over). */
  poll(request: PollRequest, signal?: AbortSignal): Promise<PollAnswer>;
  /** The task's attempt completed with `output`: the answer's status (200, or 409 for an attempt that moved on). */
  complete(token: string, output: unknown): Promise<{ status: number; error?: string }>;
}

/** A start's answer. `status` is "no answer" when the request got none (timeout, reset). */
export interface StartResult {
  ok: boolean;
  status: number | "no answer";
  /** The engine already had this id with this body (a 200 replay): a success only for a caller that sent it before. */
  existing?: boolean;
  /** The engine's advice on a 429 or 503. */
  retryAfterS?: number;
  error?: string;
}

/** One attempt of a step, as Shepherd's view shows it (only what the cases read). */
export interface AttemptView {
  kind?: string;
  scheduledAt?: number;
  startedAt?: number;
  endedAt?: number;
  /** Which deadline ended it, when one did. */
  timeout?: string;
}

export interface StepView {
  status?: string;
  attempts: AttemptView[];
}

/** A workflow read back. `state` is `http_<status>` for a read the engine did not answer with a workflow. */
export interface WorkflowStatus {
  state: string;
  terminal: boolean;
  completed: boolean;
  /** The engine's own completion stamp. */
  endedAt?: number;
  /** The steps' views, for an engine that has them (Shepherd). */
  steps?: StepView[];
  error?: string;
}

/** A history event (Shepherd's), with the fields the cases read. */
export interface HistoryEvent {
  type: string;
  stepId?: string;
  attempt?: number;
  /** The object's clock. */
  at: number;
  data?: unknown;
}

/** The Scheduler object's storage counters (the dev-only GET /dev/workflows/{id}). */
export interface StorageCounters {
  sqlCalls: number;
  rowsRead: number;
  rowsWritten: number;
  alarmWrites?: number;
}

export interface DevInfo {
  storage: StorageCounters;
  /** The object's alarm (null: none set). */
  alarmAt?: number | null;
}

/** The dev-only dispatch figures (GET /dev/dispatch): lagMs is null until the consumers first report one. */
export interface DispatchInfo {
  lagMs: number | null;
}

/** Which cases an engine has. */
export interface EngineSupport {
  detection: boolean;
  supervisor: boolean;
  /** It finishes the large burst sizes (see the burst case in run.ts). */
  burstAtScale: boolean;
  /** Its isolate can be CPU-profiled (--profile). */
  profile?: boolean;
  /** Its user pays per SQLite row its own objects write (Shepherd, the floor; not Workflows' engine): the rows case. */
  rowsBilled?: boolean;
}

/** An engine's `wrangler dev`, as every adapter runs it (dev-lifecycle.ts). */
export interface Lifecycle {
  start(): Promise<void>;
  /** wrangler dev again on the same directory and state, for an engine that stopped answering mid-run. */
  restart(): Promise<unknown>;
  stop(): Promise<void>;
  /** The workerd processes of its wrangler dev, for the CPU and memory figures. */
  workerdPids(): number[];
  logFile: string;
}

export interface Engine extends Lifecycle {
  name: EngineName;
  label: string;
  supports: EngineSupport;
  /** Where its code came from, as the report prints it. */
  source: string;
  /**
   * Its `wrangler dev`'s origin: where its local trace store answers (the bill case reads it) and where a remote
   * that answered 202 reports (`POST /v1/tasks/{token}/complete {output}`, the token from `Shepherd-Task-Token`).
   */
  origin: string;
  startWorkflow(spec: WorkflowSpec): Promise<StartResult>;
  readStatus(id: string): Promise<WorkflowStatus>;
  cancel(id: string): Promise<void>;
  /** The workflow's history, for an engine that keeps one (Shepherd). */
  history?(id: string): Promise<HistoryEvent[]>;
  /** The dev-only supervisor counters, undefined while the endpoint does not exist. */
  devInfo?(id: string): Promise<DevInfo | undefined>;
  /** The dev-only dispatch figures, undefined while the endpoint does not exist. */
  dispatchInfo?(): Promise<DispatchInfo | undefined>;
  /** One workflow over many items, for an engine that has the fan-out case. */
  fanOut?: FanOutApi;
  /** Worker pools, for an engine whose steps the user's own workers can pull (the pool case). */
  pool?: PoolApi;
}

/** An engine whose isolate --profile can reach: the inspector, the Worker's name, the snapshot its bundle names. */
export interface ProfiledEngine extends Engine {
  inspectorPort: number;
  workerName: string;
  appDir: string;
}

export const canProfile = (engine: Engine): engine is ProfiledEngine =>
  Boolean(engine.supports.profile) && "inspectorPort" in engine && "workerName" in engine && "appDir" in engine;
