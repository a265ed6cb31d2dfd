// The pool phase's worker process against a fake Shepherd and remote on one local port: it polls, heartbeats, applies
// the task's effect under its idempotencyKey, completes with that effect, and rides out a poll and a completion the
// "restart" cut off, logging every poll and task.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { waitUntil } from "../../scripts/lib/async.ts";
import { readWorkerLog } from "../lib/pool-log.ts";

const WORKER = fileURLToPath(new URL("../pool-worker.ts", import.meta.url));
const TASK = { token: "tok-1", workflowId: "wf-1", stepId: "fetch", attempt: 2, kind: "action", input: { n: 1 }, heartbeatMs: 3_000, startToCloseMs: 20_000, deadlineAt: 0, idempotencyKey: "wf-1:fetch" };

/** What the fake saw, and its script: the first poll brings the task, the second and the first completion are cut off. */
interface Seen {
  polls: number;
  heartbeats: number;
  completes: unknown[];
  effects: { headers: IncomingMessage["headers"]; body: unknown }[];
}

function fake(seen: Seen) {
  const json = (res: ServerResponse, body: unknown): void => void res.writeHead(200, { "Content-Type": "application/json" }).end(JSON.stringify(body));
  return createServer((req, res) => {
    let text = "";
    req.on("data", (chunk: Buffer) => (text += chunk.toString()));
    req.on("end", () => {
      const body: unknown = JSON.parse(text || "null");
      if (req.url?.endsWith("/tasks/poll")) {
        seen.polls += 1;
        if (seen.polls === 2) return req.socket.destroy();
        return setTimeout(() => json(res, { tasks: seen.polls === 1 ? [TASK] : [] }), seen.polls === 1 ? 0 : 50);
      }
      if (req.url?.endsWith("/heartbeat")) {
        seen.heartbeats += 1;
        return json(res, { cancelRequested: false });
      }
      if (req.url?.endsWith("/complete")) return seen.completes.push(body) === 1 ? req.socket.destroy() : json(res, { ok: true });
      seen.effects.push({ headers: req.headers, body });
      return json(res, { effectId: "eff_1", step: "fetch" });
    });
  });
}

describe("a pool worker", () => {
  const dir = mkdtempSync(join(tmpdir(), "pool-worker-test-"));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it("does its task once under the task's key, completes with the effect, and polls again after a poll and a report were cut off", async () => {
    const seen: Seen = { polls: 0, heartbeats: 0, completes: [], effects: [] };
    const server = fake(seen).listen(0, "127.0.0.1");
    await new Promise((resolve) => server.once("listening", resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const logFile = join(dir, "w1.jsonl");
    const worker = spawn(process.execPath, [WORKER, "--shepherd", url, "--remote", url, "--pool", "chaos-pool", "--id", "w1", "--log", logFile], { stdio: "ignore" });
    try {
      await waitUntil(() => readWorkerLog("w1", readText(logFile)).tasks.length > 0 && seen.polls >= 4, { timeoutMs: 10_000, what: "the task's line and two more polls" });
    } finally {
      worker.kill("SIGKILL");
      server.closeAllConnections();
      server.close();
    }
    const log = readWorkerLog("w1", readText(logFile));
    assert.deepEqual(log.polls.slice(0, 2).map((p) => [p.status, p.tasks.length]), [[200, 1], [0, 0]]);
    assert.ok(log.polls[2] && log.polls[2].start - log.polls[1]!.end >= 400, "a failed poll is sent again after a backoff");
    assert.equal(seen.effects.length, 1);
    assert.equal(seen.effects[0]?.headers["idempotency-key"], "wf-1:fetch");
    assert.equal(seen.effects[0]?.headers["shepherd-attempt"], "2");
    assert.deepEqual(seen.completes, [{ output: { effectId: "eff_1", step: "fetch" } }, { output: { effectId: "eff_1", step: "fetch" } }]);
    const [line] = log.tasks;
    assert.ok(line && line.heartbeats.length >= 1 && line.heartbeats.every((s) => s === 200));
    assert.deepEqual([line.effect, line.report], [200, { what: "complete", statuses: [0, 200] }]);
  });
});

function readText(path: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return "";
  }
}
