// Shepherd's answers as the soak reads them: only the fields it looks at, as the contract documents them. The
// client narrows each answer's JSON with the guards below (the fields that tell one answer from another) before
// anything reads it; the checks then judge what the fields say, which is their job, not the guards'.

/** Why an attempt, a step or a workflow failed. */
export interface StepError {
  message?: string;
  /** The remote's HTTP status, when there was one. */
  status?: number;
  /** Which deadline passed: schedule_to_start, start_to_close, heartbeat, stalled, … */
  timeout?: string;
}

export interface AttemptView {
  n: number;
  kind?: string;
  status: string;
  scheduledAt: number;
  startedAt?: number;
  endedAt?: number;
  error?: StepError;
}

export interface StepView {
  id: string;
  status: string;
  attempt: number;
  attempts: AttemptView[];
  output?: unknown;
  error?: StepError;
  sleepingUntil?: number;
  /** A map step's items by status (contract v1.2, "Map"). */
  items?: ItemCounts;
  /** A `workflow` step's child (contract v1.2, "Child workflows"). */
  child?: ChildRef;
}

/** The child a `workflow` step started, as its parent last heard of it. */
export interface ChildRef {
  id: string;
  status: string;
}

export interface ItemCounts {
  total: number;
  pending: number;
  running: number;
  succeeded: number;
  failed: number;
  skipped: number;
}

/** One item of `GET /v1/workflows/{id}/steps/{stepId}/items`. */
export interface MapItemView {
  index: number;
  status: string;
  attempt: number;
  output?: unknown;
  error?: unknown;
}

export interface MapItemsPage {
  items: MapItemView[];
  nextCursor?: string;
}

export interface PendingEvent {
  event: string;
  id?: string;
  receivedAt: number;
}

/** `GET /v1/workflows/{id}`. */
export interface WorkflowView {
  id: string;
  name: string;
  status: string;
  steps: StepView[];
  pendingEvents?: PendingEvent[];
  createdAt: number;
  updatedAt: number;
  endedAt?: number;
  error?: StepError;
  output?: unknown;
  /** A child workflow's parent and the step that started it. */
  parent?: { id: string; stepId: string };
  /** A delayed start's time (contract v1.2, "Starting from anywhere"). */
  startAt?: number;
  /** How often it was redriven: its end notice's id is `<id>:end:<redriveCount>`. */
  redriveCount?: number;
}

/** The `data` of the history events the soak reads; every field belongs to some event types only. */
export interface EventData {
  [field: string]: unknown;
  until?: number;
  id?: string;
  event?: string;
  buffered?: boolean;
  report?: string;
  kind?: string;
  nextRetryAt?: number;
  overdueMs?: number;
  timeout?: string;
  deadlineAt?: number;
  progressMs?: number;
  progressAt?: number;
  host?: string;
  failures?: number;
  openUntil?: number;
}

export interface HistoryEvent {
  type: string;
  at: number;
  stepId?: string;
  attempt?: number;
  data?: EventData;
}

export interface IndexRow {
  id: string;
  status: string;
  /** A child workflow's parent. */
  parentId?: string;
}

/** A page of `GET /v1/workflows`. */
export interface IndexPage {
  workflows: IndexRow[];
  nextCursor?: string | null;
}

export interface FireRecord {
  at: number;
  outcome: string;
  workflowId?: string;
  error?: string;
}

/** `GET /v1/schedules/{id}`, and the answer to its creation. */
export interface ScheduleView {
  createdAt: number;
  /** null while paused. */
  nextFireAt: number | null;
  /** The latest fires, newest last. */
  recent: FireRecord[];
}

/** A row of `GET /v1/targets`: one host's circuit breaker. */
export interface TargetRow {
  host: string;
  state: string;
  failures?: number;
  openUntil?: number;
  parked?: number;
}

export interface TargetList {
  targets: TargetRow[];
}

/** A row of `GET /v1/pools`: one worker pool's tasks and the workers seen polling it (contract v1.2, "worker pools"). */
export interface PoolRow {
  name: string;
  pending: number;
  oldestPendingAgeMs: number | null;
  running: number;
  workers: { id: string; lastPollAt: number }[];
}

export interface PoolList {
  pools: PoolRow[];
}

/** `GET /v1/bulk/{id}`: a bulk job's progress (contract v1.2, "Bulk operations"). */
export interface BulkJobView {
  id: string;
  action: string;
  status: string;
  matched: number;
  done: number;
  failed: number;
  errors: { workflowId: string; code: string; message: string }[];
  createdAt: number;
  endedAt?: number;
}

/** The dev-only `GET /dev/workflows/{id}`: the object's alarm beside its next deadline. */
export interface DevWorkflow {
  status: string;
  alarmAt?: number | null;
  /** The object's own clock when it read its alarm. */
  readAt?: number;
  nextDeadlineAt?: number | null;
}

/** The dev-only `GET /dev/dispatch`: how far behind the queue's dispatch runs. */
export interface DevDispatch {
  lagMs: number;
  boundMs?: number;
  backPressure?: boolean;
}

/** One item's answer in `POST /v1/workflows/batch`'s `results`, in item order. */
export interface BatchItemAnswer {
  index: number;
  /** 201, 200, or what the start alone would have answered. */
  status: number;
  workflow?: WorkflowView;
  error?: { code?: string; message?: string };
}

export interface BatchAnswer {
  results: BatchItemAnswer[];
}

/** `GET /v1/workflows/{id}/result`: 200 with the result once ended, 202 with only its status while not. */
export interface ResultAnswer {
  id: string;
  status: string;
  output?: unknown;
  error?: unknown;
}

/** A row of `GET /v1/starts/dead-letters`: a STARTS message that could never start. */
export interface StartDeadLetter {
  messageId: string;
  workflowId: string | null;
  error: { code: string; message: string };
}

export interface StartDeadLetterPage {
  deadLetters: StartDeadLetter[];
  nextCursor?: string;
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A field of a JSON body, whatever the body is (`body?.name` for a body of unknown shape). */
export function field(body: unknown, name: string): unknown {
  return isRecord(body) ? body[name] : undefined;
}

/** The `error.code` of an error answer. */
export const errorCode = (body: unknown): unknown => field(field(body, "error"), "code");

export const isWorkflowView = (body: unknown): body is WorkflowView =>
  isRecord(body) && typeof body.id === "string" && typeof body.status === "string" && Array.isArray(body.steps);

export const isHistoryEvent = (value: unknown): value is HistoryEvent => typeof field(value, "type") === "string" && typeof field(value, "at") === "number";

export const isMapItemsPage = (body: unknown): body is MapItemsPage => Array.isArray(field(body, "items"));

export const isIndexPage = (body: unknown): body is IndexPage => Array.isArray(field(body, "workflows"));

export const isScheduleView = (body: unknown): body is ScheduleView => typeof field(body, "createdAt") === "number" && Array.isArray(field(body, "recent"));

export const isTargetList = (body: unknown): body is TargetList => Array.isArray(field(body, "targets"));

export const isPoolList = (body: unknown): body is PoolList => Array.isArray(field(body, "pools"));

export const isBulkJob = (body: unknown): body is BulkJobView =>
  typeof field(body, "id") === "string" && typeof field(body, "matched") === "number" && typeof field(body, "done") === "number" && typeof field(body, "failed") === "number" && Array.isArray(field(body, "errors"));

export const isDevWorkflow = (body: unknown): body is DevWorkflow => typeof field(body, "status") === "string";

export const isDevDispatch = (body: unknown): body is DevDispatch => typeof field(body, "lagMs") === "number";

export const isBatchAnswer = (body: unknown): body is BatchAnswer => Array.isArray(field(body, "results"));

export const isResultAnswer = (body: unknown): body is ResultAnswer => typeof field(body, "id") === "string" && typeof field(body, "status") === "string";

export const isStartDeadLetterPage = (body: unknown): body is StartDeadLetterPage => Array.isArray(field(body, "deadLetters"));
