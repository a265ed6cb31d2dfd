// Shepherd under test: a snapshot of the project (so edits to src/ during a run change nothing), its D1
// migrations applied to fresh persisted state, then `wrangler dev` with the bench's vars
// (scripts/lib/wrangler-dev.ts).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { requestJson, retryAfterSeconds } from "../../../scripts/lib/http-json.ts";
import { applyD1Migrations, describeSource, snapshotProject, wranglerDev } from "../../../scripts/lib/wrangler-dev.ts";
import type { SnapshotSource, SourceDescription, WranglerDev } from "../../../scripts/lib/wrangler-dev.ts";
import { devLifecycle } from "./dev-lifecycle.ts";
import { FAN_OUT_START_TIMEOUT_MS, FAN_OUT_STEP_ID } from "./engine.ts";
import type { Engine, FanOutApi, FanOutSpec, PoolApi, PoolWorkflowSpec, ProfiledEngine, WorkflowSpec } from "./engine.ts";
import { devInfo, dispatchInfo, historyEvents, pollAnswer, workflowStatus } from "./shepherd-answers.ts";

const TOKEN = "bench-token";
const AUTH = { Authorization: `Bearer ${TOKEN}` };
/** A long poll's answer may come this long after its waitMs on a busy machine before the worker gives up on it. */
const POLL_GRACE_MS = 60_000;

export interface EngineOptions {
  repo: string;
  tmp: string;
  port: number;
  inspectorPort: number;
  /** wrangler's per-request logs. */
  verbose: boolean;
}

/** The snapshot's origin as the report prints it: the commit, and whether uncommitted work came with it. */
function sourceLabel({ source, commit, dirtyFiles }: SourceDescription): string {
  if (source === "head") return `${commit} (HEAD)`;
  return dirtyFiles > 0 ? `${commit} + uncommitted changes` : `${commit}`;
}

export function shepherdEngine({ repo, tmp, port, inspectorPort, source, verbose }: EngineOptions & { source: SnapshotSource }): ProfiledEngine {
  const dir = join(tmp, "shepherd-app");
  const persistTo = join(tmp, "shepherd-state");
  const dev = wranglerDev({
    repo, tmp, cwd: dir, port, inspectorPort, persistTo,
    logFile: join(tmp, "shepherd-dev.log"),
    // Per-request log lines cost wrangler CPU at thousands of requests; warnings and errors still show.
    logLevel: verbose ? "info" : "warn",
    vars: {
      TASK_TOKEN_SECRET: "bench-secret",
      ALLOW_PRIVATE_TARGETS: "true",
      API_TOKENS: `bench:${TOKEN}`,
      DEV_HOOKS: "true",
    },
  });
  const prepare = async (): Promise<void> => {
    snapshotProject(repo, dir, { source });
    await applyD1Migrations({ repo, tmp, cwd: dir, persistTo, logFile: join(tmp, "shepherd-migrate.log") });
  };
  return {
    name: "shepherd",
    label: "Shepherd",
    supports: { detection: true, supervisor: true, burstAtScale: true, profile: true, rowsBilled: true },
    source: sourceLabel(describeSource(repo, source)),
    origin: dev.url,
    /** For --profile: the inspector wrangler dev opens, the Worker's name, the snapshot whose bundle the profile names. */
    inspectorPort,
    workerName: /^name\s*=\s*"([^"]+)"/m.exec(readFileSync(join(repo, "wrangler.toml"), "utf8"))?.[1] ?? "shepherd",
    appDir: dir,
    ...devLifecycle(dev, prepare),
    ...shepherdApi(dev),
  };
}

/** A start request: sequential steps (each depends on the one before), the same body shape for every step. */
function startBody(spec: WorkflowSpec): unknown {
  return {
    id: spec.id,
    definition: {
      name: "bench",
      defaults: { retry: spec.retry, timeouts: spec.timeouts },
      steps: spec.steps.map((step) => ({
        id: step.id,
        action: { type: "http", url: step.url, body: { workflow: "{{ workflow.id }}", step: step.id } },
      })),
    },
  };
}

/**
 * The fan-out case's start: one `map` step over the items 0 … N-1 given as the workflow's input, each item a
 * POST of `{n, item}` to the remote; the retry policy and timeouts apply to every item.
 */
export function fanOutBody(spec: FanOutSpec): unknown {
  return {
    id: spec.id,
    definition: {
      name: "fanout",
      defaults: { retry: spec.retry, timeouts: spec.timeouts },
      steps: [{
        id: FAN_OUT_STEP_ID,
        map: {
          items: "{{ input.items }}",
          maxConcurrency: spec.maxConcurrency,
          step: { action: { type: "http", url: spec.url, method: "POST", body: { n: "{{ index }}", item: "{{ item }}" } } },
        },
      }],
    },
    input: { items: Array.from({ length: spec.items }, (_, index) => index) },
  };
}

/**
 * The pool case's start: sequential `worker` steps s1 … sN of one pool (each depends on the one before), each
 * task's input naming its workflow and step, as the http steps' bodies do.
 */
export function poolBody(spec: PoolWorkflowSpec): unknown {
  return {
    id: spec.id,
    definition: {
      name: "pool",
      defaults: { retry: spec.retry, timeouts: spec.timeouts },
      steps: Array.from({ length: spec.steps }, (_, index) => ({
        id: `s${index + 1}`,
        action: { type: "worker", pool: spec.pool, input: { workflow: "{{ workflow.id }}", step: `s${index + 1}` } },
      })),
    },
  };
}

/** A worker's calls: the pool's long poll (tenant token), and the report, which the task's token alone authorises. */
function poolApi(dev: WranglerDev): PoolApi {
  return {
    startWorkflow: (spec) => startShepherd(dev, poolBody(spec)),
    async poll({ pool, workerId, waitMs, max }, signal) {
      const url = `${dev.url}/v1/pools/${encodeURIComponent(pool)}/tasks/poll`;
      const { status, body, text, headers } = await requestJson(url, { method: "POST", body: { workerId, waitMs, max }, headers: AUTH, timeoutMs: waitMs + POLL_GRACE_MS, signal });
      return pollAnswer(status, body, text, retryAfterSeconds(headers));
    },
    async complete(token, output) {
      const { status, text } = await requestJson(`${dev.url}/v1/tasks/${encodeURIComponent(token)}/complete`, { method: "POST", body: { output } });
      return { status, error: status === 200 ? undefined : text.slice(0, 300) };
    },
  };
}

type ShepherdApi = Pick<Engine, "startWorkflow" | "readStatus" | "history" | "devInfo" | "dispatchInfo" | "cancel" | "fanOut" | "pool">;

/** POST /v1/workflows: 201 is a new workflow, 200 the replay of one the engine has. */
async function startShepherd(dev: WranglerDev, body: unknown, timeoutMs?: number): ReturnType<FanOutApi["start"]> {
  const { status, text, headers } = await requestJson(`${dev.url}/v1/workflows`, { method: "POST", body, headers: AUTH, timeoutMs });
  return { ok: status === 201, status, existing: status === 200, retryAfterS: retryAfterSeconds(headers), error: status === 201 ? undefined : text.slice(0, 300) };
}

/** The adapter's calls of Shepherd's API. */
function shepherdApi(dev: WranglerDev): ShepherdApi {
  const workflow = (id: string): string => `${dev.url}/v1/workflows/${encodeURIComponent(id)}`;
  const readStatus: Engine["readStatus"] = async (id) => {
    const { status, body, text } = await requestJson(workflow(id), { headers: AUTH });
    return workflowStatus(status, body, text);
  };
  const cancel: Engine["cancel"] = async (id) => {
    await requestJson(`${workflow(id)}/cancel`, { method: "POST", headers: AUTH });
  };
  return {
    startWorkflow: (spec) => startShepherd(dev, startBody(spec)),
    readStatus,
    cancel,
    fanOut: { start: (spec) => startShepherd(dev, fanOutBody(spec), FAN_OUT_START_TIMEOUT_MS), readStatus, cancel },
    pool: poolApi(dev),
    async history(id) {
      const { status, body } = await requestJson(`${workflow(id)}/history`, { headers: AUTH });
      return historyEvents(status, body);
    },
    async devInfo(id) {
      const { status, body } = await requestJson(`${dev.url}/dev/workflows/${encodeURIComponent(id)}`, { headers: AUTH });
      return devInfo(status, body);
    },
    // A short timeout: it is sampled every second while the engine is busy.
    async dispatchInfo() {
      const { status, body } = await requestJson(`${dev.url}/dev/dispatch`, { headers: AUTH, timeoutMs: 5_000 });
      return dispatchInfo(status, body);
    },
  };
}
