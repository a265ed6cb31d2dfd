// Shepherd under test: a snapshot of the project (so edits to src/ during a run change nothing), its D1
// migrations applied to fresh persisted state, then `wrangler dev` with the bench's vars
// (scripts/lib/wrangler-dev.ts).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { requestJson, retryAfterSeconds } from "../../../scripts/lib/http-json.ts";
import { applyD1Migrations, describeSource, snapshotProject, wranglerDev } from "../../../scripts/lib/wrangler-dev.ts";
import { devLifecycle } from "./dev-lifecycle.ts";

const TOKEN = "bench-token";
const AUTH = { Authorization: `Bearer ${TOKEN}` };
const TERMINAL = new Set(["completed", "failed", "compensated", "cancelled", "needs_attention"]);

/** The snapshot's origin as the report prints it: the commit, and whether uncommitted work came with it. */
function sourceLabel({ source, commit, dirtyFiles }) {
  if (source === "head") return `${commit} (HEAD)`;
  return dirtyFiles > 0 ? `${commit} + uncommitted changes` : commit;
}

export function shepherdEngine({ repo, tmp, port, inspectorPort, source, verbose }) {
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
  const prepare = async () => {
    snapshotProject(repo, dir, { source });
    await applyD1Migrations({ repo, tmp, cwd: dir, persistTo, logFile: join(tmp, "shepherd-migrate.log") });
  };

  /** A start request: sequential steps (each depends on the one before), the same body shape for every step. */
  function startBody(spec) {
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

  return {
    name: "shepherd",
    label: "Shepherd",
    supports: { detection: true, supervisor: true, burstAtScale: true, profile: true },
    source: sourceLabel(describeSource(repo, source)),
    /** For --profile: the inspector wrangler dev opens, the Worker's name, the snapshot whose bundle the profile names. */
    inspectorPort,
    workerName: /^name\s*=\s*"([^"]+)"/m.exec(readFileSync(join(repo, "wrangler.toml"), "utf8"))?.[1] ?? "shepherd",
    appDir: dir,
    ...devLifecycle(dev, prepare),

    /**
     * spec: { id, steps: [{id, url}], retry: Shepherd retry policy, timeouts: Shepherd timeouts }.
     * `existing`: the engine already had this id with this body (a 200 replay), which is only a success for a
     * caller that sent the start before; `retryAfterS` is the engine's advice on a 429 or 503.
     */
    async startWorkflow(spec) {
      const { status, text, headers } = await requestJson(`${dev.url}/v1/workflows`, { method: "POST", body: startBody(spec), headers: AUTH });
      return {
        ok: status === 201,
        status,
        existing: status === 200,
        retryAfterS: retryAfterSeconds(headers),
        error: status === 201 ? undefined : text.slice(0, 300),
      };
    },

    /** { state, terminal, completed, endedAt? } with the engine's own completion stamp. */
    async readStatus(id) {
      const { status, body, text } = await requestJson(`${dev.url}/v1/workflows/${encodeURIComponent(id)}`, { headers: AUTH });
      if (status !== 200) return { state: `http_${status}`, terminal: status === 404 ? false : true, completed: false, error: text.slice(0, 300) };
      return {
        state: body.status,
        terminal: TERMINAL.has(body.status),
        completed: body.status === "completed",
        endedAt: body.endedAt,
        steps: body.steps,
      };
    },

    async history(id) {
      const { status, body } = await requestJson(`${dev.url}/v1/workflows/${encodeURIComponent(id)}/history`, { headers: AUTH });
      return status === 200 ? body.events : [];
    },

    /** The dev-only supervisor counters, or undefined while the endpoint does not exist (404). */
    async devInfo(id) {
      const { status, body } = await requestJson(`${dev.url}/dev/workflows/${encodeURIComponent(id)}`, { headers: AUTH });
      return status === 200 && body?.storage ? body : undefined;
    },

    /**
     * The dev-only dispatch figures { lagMs, reportedAt, boundMs, backPressure } (lagMs null until the
     * consumers first report one), or undefined while the endpoint does not exist (404). A short timeout: it
     * is sampled every second while the engine is busy.
     */
    async dispatchInfo() {
      const { status, body } = await requestJson(`${dev.url}/dev/dispatch`, { headers: AUTH, timeoutMs: 5_000 });
      return status === 200 && body ? body : undefined;
    },

    async cancel(id) {
      await requestJson(`${dev.url}/v1/workflows/${encodeURIComponent(id)}/cancel`, { method: "POST", headers: AUTH });
    },
  };
}
