// A small HTTP client for Shepherd's API. It never throws for what the server does (a refused connection
// during the restart is an answer too: status 0), every request has a timeout, and it only talks to
// 127.0.0.1, so the soak cannot send traffic anywhere else.
/* global URL */
import { requestJson } from "../../scripts/lib/http-json.ts";
import { API_TOKEN } from "./shepherd.ts";

const REQUEST_TIMEOUT_MS = 5_000;

/** A client of the soak's own tenant, or of another one's (`token`: the noisy-neighbour phase). */
export function createClient(baseUrl, { token = API_TOKEN } = {}) {
  const base = new URL(baseUrl);
  if (base.hostname !== "127.0.0.1") throw new Error(`the chaos client only talks to 127.0.0.1 (got ${baseUrl})`);

  /**
   * One request: {status, body, error, retryAfter}; status 0 when no answer came (refused, reset, timed out).
   * `retryAfter` is the raw Retry-After header (or null): back-pressure is part of the answer.
   */
  async function request(method, path, { body, timeoutMs = REQUEST_TIMEOUT_MS } = {}) {
    // Auth is required on /v1 and the dev routes (task callbacks use their token, but the soak makes none).
    const headers = path.startsWith("/v1/") || path.startsWith("/dev/") ? { Authorization: `Bearer ${token}` } : {};
    try {
      const res = await requestJson(new URL(path, base), { method, body, headers, timeoutMs });
      const parsed = res.body !== undefined ? res.body : res.text ? { text: res.text } : null;
      return { status: res.status, body: parsed, error: null, retryAfter: res.headers.get("retry-after") };
    } catch (error) {
      return { status: 0, body: null, error: error?.cause?.code ?? error?.name ?? String(error), retryAfter: null };
    }
  }

  return {
    baseUrl: base.origin,
    request,
    startWorkflow: (payload) => request("POST", "/v1/workflows", { body: payload }),
    getWorkflow: (id) => request("GET", `/v1/workflows/${encodeURIComponent(id)}`),
    listWorkflows: (cursor, { name } = {}) =>
      request("GET", `/v1/workflows?limit=100${name ? `&name=${encodeURIComponent(name)}` : ""}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`),
    /** An event (signal) for a workflow: {event, payload?, id?}. */
    sendEvent: (id, event) => request("POST", `/v1/workflows/${encodeURIComponent(id)}/events`, { body: event }),
    /** Cron schedules (contract v1.1, "Schedules (cron)"). */
    createSchedule: (spec) => request("POST", "/v1/schedules", { body: spec }),
    getSchedule: (id) => request("GET", `/v1/schedules/${encodeURIComponent(id)}`),
    deleteSchedule: (id) => request("DELETE", `/v1/schedules/${encodeURIComponent(id)}`),
    /** The tenant's circuit breakers by target host (contract v1.1, "Supervision beyond deadlines"). */
    listTargets: () => request("GET", "/v1/targets?limit=100"),
    getDevWorkflow: (id) => request("GET", `/dev/workflows/${encodeURIComponent(id)}`),
    getDevDispatch: () => request("GET", "/dev/dispatch"),
    /** Runs the Worker's cron handler (the sweep) now; wrangler dev has --test-scheduled for it. */
    runCronSweep: () => request("GET", "/__scheduled?cron=*+*+*+*+*"),
    /** The whole history, page by page (bounded: at most `maxPages` pages). */
    async getHistory(id, maxPages = 20) {
      const events = [];
      let after = 0;
      for (let page = 0; page < maxPages; page++) {
        const res = await request("GET", `/v1/workflows/${encodeURIComponent(id)}/history?after=${after}&limit=1000`);
        if (res.status !== 200) return { ok: false, status: res.status, events };
        events.push(...(res.body.events ?? []));
        if (res.body.nextAfter === undefined || res.body.nextAfter === null) return { ok: true, events };
        after = res.body.nextAfter;
      }
      return { ok: false, status: "too many pages", events };
    },
  };
}

export const TERMINAL_STATUSES = new Set(["completed", "failed", "compensated", "cancelled", "terminated"]);
