// The arrivals phase's driver against a fake Shepherd on one local port, with a "restart" in the middle (every socket
// cut and every request refused for a moment): what is held goes at the kill, what follows the restart goes after it,
// every workflow is followed to its end, and the phase's checks pass over what it recorded. The fake runs a delayed
// start's time twenty times faster than asked (its views still say the time asked), so the test takes seconds.
import assert from "node:assert/strict";
import { createServer } from "node:http";
import type { ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, it } from "node:test";
import { sleep } from "../../scripts/lib/async.ts";
import { buildArrivals } from "../lib/arrivals.ts";
import { driveArrivals } from "../lib/arrivals-driver.ts";
import { checkArrivals } from "../lib/checks/arrivals.ts";
import { createClient } from "../lib/client.ts";
import type { StartPayload } from "../lib/definitions.ts";
import { readFinals } from "../lib/finals.ts";
import { noticeId } from "../lib/notices.ts";
import type { NoticeRecord } from "../lib/notices.ts";

const TIME_SCALE = 20;
const RUN_MS = 100;
const OUTPUT = { done: true };

interface Made {
  createdAt: number;
  startAt: number | null;
  /** When the fake really starts it, and ends it. */
  runsAt: number;
  endsAt: number;
}

/** The fake's workflows: each ends RUN_MS after it starts, and its notice is sent just after. */
function fakeEngine() {
  const made = new Map<string, Made>();
  const notices: NoticeRecord[] = [];
  const statusOf = (m: Made, now = Date.now()): string => (now < m.runsAt ? "scheduled" : now < m.endsAt ? "running" : "completed");
  const view = (id: string, m: Made, now = Date.now()) => ({
    id, name: "chaos", status: statusOf(m, now), steps: [], createdAt: m.createdAt, updatedAt: now, redriveCount: 0,
    ...(m.startAt === null ? {} : { startAt: m.startAt }), ...(statusOf(m, now) === "completed" ? { endedAt: m.endsAt, output: OUTPUT } : {}),
  });
  const history = (m: Made) => [
    ...(m.startAt === null ? [] : [{ type: "workflow_scheduled", at: m.createdAt, data: { startAt: m.startAt } }]),
    { type: "workflow_started", at: m.startAt ?? m.createdAt, data: {} },
    ...(Date.now() >= m.endsAt ? [{ type: "workflow_completed", at: m.endsAt }] : []),
  ];
  /** Starts it (201), or finds it started (200); its view either way. */
  const start = (body: StartPayload): { status: number; workflow: ReturnType<typeof view> } => {
    const found = made.get(body.id);
    if (found) return { status: 200, workflow: view(body.id, found) };
    const now = Date.now();
    const delay = body.startDelayMs ?? 0;
    const runsAt = now + delay / TIME_SCALE;
    const m = { createdAt: now, startAt: delay ? now + delay : null, runsAt, endsAt: runsAt + RUN_MS };
    made.set(body.id, m);
    setTimeout(() => notices.push({ at: Date.now(), webhookId: noticeId(body.id), timestamp: null, verified: true, type: "workflow.completed", workflowId: body.id, status: "completed", redriveCount: 0, output: OUTPUT }), m.endsAt - now + 20);
    return { status: 201, workflow: view(body.id, m) };
  };
  return { made, notices, statusOf, view, history, start };
}

type Engine = ReturnType<typeof fakeEngine>;

const json = (res: ServerResponse, status: number, body: unknown): void => void res.writeHead(status, { "Content-Type": "application/json" }).end(JSON.stringify(body));

/** The routes the phase uses, over the engine. */
function route(engine: Engine, method: string, url: URL, body: unknown, res: ServerResponse): void {
  const [, , , id = "", tail] = url.pathname.split("/").map(decodeURIComponent);
  if (method === "POST" && url.pathname === "/v1/workflows") {
    const { status, workflow } = engine.start(body as StartPayload);
    return json(res, status, workflow);
  }
  if (method === "POST" && url.pathname === "/v1/workflows/batch") {
    const items = (body as { workflows: StartPayload[] }).workflows;
    const results = items.map((item, index) => (item.definition.steps.length === 0 ? { index, status: 400, error: { code: "validation_failed", message: "steps" } } : { index, ...engine.start(item) }));
    return json(res, 200, { results });
  }
  if (method === "POST" && url.pathname === "/dev/starts") {
    setTimeout(() => engine.start((body as { start: StartPayload }).start), 30);
    return json(res, 202, { queued: true });
  }
  if (url.pathname === "/v1/starts/dead-letters") return json(res, 200, { deadLetters: [] });
  const m = engine.made.get(id);
  if (!m) return json(res, 404, { error: { code: "not_found" } });
  if (tail === "history") return json(res, 200, { events: engine.history(m) });
  if (tail !== "result") return json(res, 200, engine.view(id, m));
  const until = Date.now() + Number(url.searchParams.get("waitMs"));
  // One reading of the clock: two could fall either side of the end and answer 202 with an ended status.
  const answer = (now = Date.now()): void => (now >= m.endsAt ? json(res, 200, { id, status: "completed", output: OUTPUT }) : json(res, 202, { id, status: engine.statusOf(m, now) }));
  setTimeout(answer, Math.max(0, Math.min(until, m.endsAt) - Date.now()));
}

/** A Shepherd of the routes the phase uses; while `down`, it cuts every request. */
function fakeShepherd() {
  const engine = fakeEngine();
  const state = { down: false, requests: [] as string[] };
  const server = createServer((req, res) => {
    let text = "";
    req.on("data", (chunk: Buffer) => (text += chunk.toString()));
    req.on("end", () => {
      if (state.down) return req.socket.destroy();
      const url = new URL(req.url ?? "/", "http://127.0.0.1");
      state.requests.push(`${req.method} ${url.pathname}`);
      return route(engine, req.method ?? "GET", url, text ? JSON.parse(text) : null, res);
    });
  });
  return { server, notices: engine.notices, state };
}

describe("the arrivals phase's driver", () => {
  it("sends the held starts at the kill and what follows the restart after it, follows every workflow to its end, and passes its checks", async () => {
    const fake = fakeShepherd();
    fake.server.listen(0, "127.0.0.1");
    await new Promise((resolve) => fake.server.once("listening", resolve));
    const url = `http://127.0.0.1:${(fake.server.address() as AddressInfo).port}`;
    const client = createClient(url);
    const plan = buildArrivals({ seed: "t", count: 4, remoteUrl: "http://127.0.0.1:1" });
    let over = false;
    try {
      const phase = driveArrivals({ client, plan, restart: true, restartOver: () => over, deadline: Date.now() + 20_000, notices: () => [...fake.notices] });
      await sleep(1_000);
      const mark = fake.state.requests.length;
      assert.match((await phase.beforeKill()) ?? "", /2 delayed starts, a batch and 2 start messages sent just before \(all answered\)/);
      const sends = fake.state.requests.slice(mark).filter((r) => r.startsWith("POST")).sort();
      assert.deepEqual(sends, ["POST /dev/starts", "POST /dev/starts", "POST /v1/workflows", "POST /v1/workflows", "POST /v1/workflows/batch"], "the held sends went at the kill");
      const outage = { from: Date.now(), to: Date.now() + 500 };
      fake.state.down = true;
      fake.server.closeAllConnections();
      await sleep(500);
      fake.state.down = false;
      over = true;
      const run = await phase.done;
      assert.ok(run.held.atKill);
      assert.ok(run.results.every((r) => r.terminal), JSON.stringify(run.results.filter((r) => !r.terminal)));
      const repeat = run.batches.find((s) => s.send === "repeat");
      assert.ok(repeat && repeat.attempts[0] && repeat.attempts[0].sentAt >= outage.to, "the batch's repeat waited for the restart to be over");
      assert.ok(repeat.attempts.at(-1)?.answers?.every((a) => a.status === 200));
      assert.deepEqual(run.queued.map((q) => q.copies.length), [2, 2, 2, 2]);
      assert.ok(run.queued.filter((q) => q.wave === "kill").every((q) => (q.copies[1]?.sentAt ?? 0) >= outage.to));
      assert.equal(run.longPolls.length, plan.longPolled.size);
      assert.deepEqual(run.badItems, [{ id: "chaos-t-batched-bad", status: 404 }]);
      const finals = await readFinals(client, run.results);
      const checks = checkArrivals(plan, run, finals, outage);
      assert.deepEqual(checks.map((c) => [c.name, c.status]), checks.map((c) => [c.name, "pass"]), JSON.stringify(checks.map((c) => c.data)));
    } finally {
      fake.server.closeAllConnections();
      fake.server.close();
    }
  });
});
