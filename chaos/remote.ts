// The chaos soak's remote service: an idempotent HTTP API on 127.0.0.1 that misbehaves on purpose.
//
//   POST /act/{step}         the step's action        POST /compensate/{step}  its compensation
//   POST /stall/{step}       202, then a job on the task token: the first attempt stuck, later ones complete
//   POST /lost/{step}        applies the effect; the first request's answer is lost (body.lose: reset or hang)
//   POST /item/{mapStep}     a map's item: 503 or a hang once for the keys case 27 picks; the effect echoes index and item
//   POST /worker/{step}      a pool worker's effect for its task (no faults), under the task's idempotencyKey
//   POST /notify             a workflow's end notice (a start's `notify`): kept with its headers, its signature verified
//   GET  /notices            the end notices received (JSON)
//   GET  /effects/{key}      the effect of that key (200 with its body) or 404: a step's `verify`
//   GET  /stats              counters, per Idempotency-Key and per logical operation (JSON)
//   GET  /healthz            {ok: true}
//
// What it does with each operation (the faults, the jobs behind a 202, the lost answers) is
// lib/remote-operations.ts; what it keeps for the checks, lib/remote-ledger.ts.
//
// The same code serves the breaker scenario's second host, without faults: `armOutage(ms)` makes it answer
// every operation 503 for that long from the next request on.
//
// Standalone: node chaos/remote.ts --port 8812 --seed 1 [--no-faults]
//
// The HTTP side (127.0.0.1, bodies, held sockets, the stored answer per key, closing) is the shared fake
// remote's (scripts/lib/fake-remote.ts); the fault plan and the bookkeeping the checks read are the soak's.
/* global process, console */
import { pathToFileURL } from "node:url";
import { idempotencyStore, startFakeRemote } from "../scripts/lib/fake-remote.ts";
import { DEFAULT_REMOTE_FAULTS, NO_REMOTE_FAULTS } from "./lib/faults.ts";
import type { RemoteFaults } from "./lib/faults.ts";
import { ledgerStats, newLedger } from "./lib/remote-ledger.ts";
import type { EffectBody, HostOutage, IdempotencyStore, RemoteStats } from "./lib/remote-ledger.ts";
import { isRoute, operation, verifyEffect } from "./lib/remote-operations.ts";
import { NOTICE_PATH, readNotice } from "./lib/notices.ts";
import type { NoticeRecord } from "./lib/notices.ts";
import type { RemoteCall, RemoteContext, Reply } from "./lib/remote-operations.ts";

const MAX_BODY_BYTES = 256 * 1024;

export interface RemoteOptions {
  port: number;
  seed: string;
  faults?: Readonly<RemoteFaults>;
  /**
   * The 422 decided for a key rather than drawn: false for the cron schedule's workflows, whose ids depend on the
   * clock and so cannot be predicted; true or false for the parent/child family's, predicted from its shapes;
   * null (the default) draws it. Transient faults stay either way.
   */
  declineOf?: (key: string) => boolean | null;
  /** Where the jobs behind a 202 send their heartbeats and completions. */
  shepherdUrl?: string | null;
  /** The secret end notices are signed with (the arrivals phase's): each one received is verified with it. */
  noticeSecret?: string;
  log?: (line: string) => void;
}

export interface Remote {
  url: string;
  /** The same JSON as GET /stats. */
  stats(): RemoteStats;
  /** The end notices received so far, in arrival order (GET /notices). */
  notices(): NoticeRecord[];
  /**
   * Every operation answers 503 for `ms` from the next one on. Returns the outage, whose {from, to} are
   * filled in (null until then) when that request comes.
   */
  armOutage(ms: number): HostOutage;
  /** Ends every held socket and stops. */
  close(): Promise<void>;
}

/** What the shared fake remote's server gives back, as the remote uses it. */
interface Server {
  url: string;
  heldCount(): number;
  close(): Promise<void>;
}

/** Starts the remote service. Resolves once it listens. */
export async function startRemote({ port, seed, faults = DEFAULT_REMOTE_FAULTS, declineOf = () => null, shepherdUrl = null, noticeSecret = "", log = () => {} }: RemoteOptions): Promise<Remote> {
  const answers: IdempotencyStore<EffectBody> = idempotencyStore();
  const ledger = newLedger(answers);
  const startedAt = Date.now();
  let closing = false;
  const ctx: RemoteContext = { seed, faults, declineOf, shepherdUrl, log, ledger, closing: () => closing };
  const stats = (): RemoteStats => ledgerStats(ledger, { seed, faults, uptimeMs: Date.now() - startedAt, heldSockets: server.heldCount() });
  const notices: NoticeRecord[] = [];
  const receive = (call: RemoteCall): Reply => {
    notices.push(readNotice(call.req.headers, call.text, noticeSecret, Date.now()));
    return { status: 200, body: { received: true } };
  };
  const server: Server = await startFakeRemote({ port, maxBodyBytes: MAX_BODY_BYTES, handle: (call: RemoteCall) => route(ctx, call, stats, { receive, notices }) });
  return {
    url: server.url,
    stats,
    notices: () => [...notices],
    armOutage(ms) {
      const armed: HostOutage = { ms, armedAt: Date.now(), from: null, to: null };
      ledger.armed = armed;
      return armed;
    },
    close() {
      closing = true;
      return server.close();
    },
  };
}

/** The end notices' side of the remote: taking one, and those taken. */
interface NoticeInbox {
  receive: (call: RemoteCall) => Reply;
  notices: readonly NoticeRecord[];
}

function route(ctx: RemoteContext, call: RemoteCall, stats: () => RemoteStats, inbox: NoticeInbox): Reply | undefined | Promise<Reply | undefined> {
  const [, name, step] = /^\/(act|compensate|stall|lost|item|worker)\/([A-Za-z0-9_.:-]+)$/.exec(call.path) ?? [];
  if (call.method === "POST" && isRoute(name) && step) return operation(ctx, call, name, step);
  const effect = /^\/effects\/([A-Za-z0-9_.:%-]+)$/.exec(call.path);
  if (call.method === "GET" && effect) return verifyEffect(ctx, call, decodeURIComponent(effect[1] ?? ""));
  if (call.method === "GET" && call.path === "/stats") return { status: 200, body: stats() };
  if (call.method === "POST" && call.path === NOTICE_PATH) return inbox.receive(call);
  if (call.method === "GET" && call.path === "/notices") return { status: 200, body: { notices: inbox.notices } };
  if (call.method === "GET" && call.path === "/healthz") return { status: 200, body: { ok: true } };
  return { status: 404, body: { error: "not found" } };
}

// Standalone use: for poking at the fault plan by hand, and the noisy neighbour's quiet host.
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const arg = (name: string, fallback: string): string => {
    const i = process.argv.indexOf(name);
    return i === -1 ? fallback : (process.argv[i + 1] ?? fallback);
  };
  // --no-faults: the soak's noisy neighbour runs its quiet host this way, in a process of its own (lib/quiet-host.ts).
  const faults = process.argv.includes("--no-faults") ? NO_REMOTE_FAULTS : DEFAULT_REMOTE_FAULTS;
  const remote = await startRemote({ port: Number(arg("--port", "8812")), seed: arg("--seed", "1"), faults, log: console.log });
  console.log(`chaos remote on ${remote.url} (GET /stats)`);
  const stop = (): Promise<never> => remote.close().then(() => process.exit(0));
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
}
