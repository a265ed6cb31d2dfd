// Shepherd under test: a snapshot of the project (so edits to src/ during a run change nothing), its D1
// migrations applied to fresh persisted state, then `wrangler dev` with the bench's vars.
import { execFileSync } from "node:child_process";
import { cpSync, mkdirSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { startWranglerDev, wranglerOnce } from "../wrangler.mjs";
import { requestJson, retryAfterSeconds } from "../util.mjs";

/** What the Worker needs to build and run; nothing else of the project is copied. */
const SNAPSHOT_PATHS = ["src", "migrations", "wrangler.toml", "package.json", "tsconfig.json"];
const TOKEN = "bench-token";
const AUTH = { Authorization: `Bearer ${TOKEN}` };
const TERMINAL = new Set(["completed", "failed", "compensated", "cancelled", "needs_attention"]);

/**
 * Copies the Worker's sources into `dir`: from the working tree (default, includes uncommitted work) or
 * from the last commit (`source: "head"`, for when the working tree is mid-edit and does not build).
 */
function snapshot(repo, dir, source) {
  mkdirSync(dir, { recursive: true });
  if (source === "head") {
    const archive = execFileSync("git", ["-C", repo, "archive", "--format=tar", "HEAD", ...SNAPSHOT_PATHS]);
    execFileSync("tar", ["-x", "-C", dir], { input: archive });
  } else {
    for (const path of SNAPSHOT_PATHS) cpSync(join(repo, path), join(dir, path), { recursive: true });
  }
  symlinkSync(join(repo, "node_modules"), join(dir, "node_modules"), "dir");
}

/** The commit the snapshot came from, and whether the working tree differed from it under src/. */
function describeSource(repo, source) {
  const commit = execFileSync("git", ["-C", repo, "rev-parse", "--short", "HEAD"], { encoding: "utf8" }).trim();
  if (source === "head") return `${commit} (HEAD)`;
  const dirty = execFileSync("git", ["-C", repo, "status", "--porcelain", "--", ...SNAPSHOT_PATHS], { encoding: "utf8" }).trim();
  return dirty ? `${commit} + uncommitted changes` : commit;
}

export function shepherdEngine({ repo, tmp, port, inspectorPort, source, verbose }) {
  const dir = join(tmp, "shepherd-app");
  const persistTo = join(tmp, "shepherd-state");
  let dev;

  async function launch() {
    dev = await startWranglerDev({
      repo, tmp, cwd: dir, port, inspectorPort, persistTo, verbose,
      logFile: join(tmp, "shepherd-dev.log"),
      healthPath: "/healthz",
      vars: {
        TASK_TOKEN_SECRET: "bench-secret",
        ALLOW_PRIVATE_TARGETS: "true",
        API_TOKENS: `bench:${TOKEN}`,
        DEV_HOOKS: "true",
      },
    });
  }

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
    supports: { detection: true, supervisor: true, burstAtScale: true },
    source: describeSource(repo, source),

    async start() {
      snapshot(repo, dir, source);
      await wranglerOnce({
        repo, tmp, cwd: dir, logFile: join(tmp, "shepherd-migrate.log"),
        args: ["d1", "migrations", "apply", "DB", "--local", "--persist-to", persistTo],
      });
      await launch();
    },
    /** wrangler dev again on the same snapshot and state, for an engine that stopped answering mid-run. */
    async restart() {
      await dev?.stop();
      await launch();
    },
    stop: () => dev?.stop(),
    workerdPids: () => dev?.workerdPids() ?? [],
    logFile: join(tmp, "shepherd-dev.log"),

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
