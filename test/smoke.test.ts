// Smoke test for the test harness: proves that tests run inside the Workers runtime
// with real Durable Object (SQLite), D1 and Queue bindings.
import {
  createExecutionContext,
  createMessageBatch,
  getQueueResult,
  runDurableObjectAlarm,
  runInDurableObject,
  type MessageBatchMessage,
} from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import worker from "../src/index";
import { WorkflowScheduler } from "../src/workflow/object";

afterEach(() => {
  vi.restoreAllMocks();
});

describe("worker harness", () => {
  it("serves fetch through exports.default", async () => {
    const response = await exports.default.fetch("http://shepherd.test/healthz");
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ ok: true });
  });

  it("exposes test bindings and vars", () => {
    expect(env.TASK_TOKEN_SECRET).toBe("test-task-token-secret");
    expect(env.ALLOW_PRIVATE_TARGETS).toBe("true");
  });
});

describe("WorkflowScheduler Durable Object", () => {
  it("answers RPC calls", async () => {
    const stub = env.WORKFLOW_SCHEDULER.getByName("smoke-rpc");
    // A fresh instance holds no workflow yet.
    expect(await stub.describe()).toBeUndefined();
  });

  it("runs code inside the object with SQLite storage", async () => {
    const stub = env.WORKFLOW_SCHEDULER.getByName("smoke-sql");
    const rows = await runInDurableObject(stub, (instance, state) => {
      expect(instance).toBeInstanceOf(WorkflowScheduler);
      state.storage.sql.exec("CREATE TABLE IF NOT EXISTS t (k TEXT PRIMARY KEY, v INTEGER NOT NULL)");
      state.storage.sql.exec("INSERT INTO t (k, v) VALUES (?, ?)", "a", 1);
      return state.storage.sql.exec<{ k: string; v: number }>("SELECT k, v FROM t").toArray();
    });
    expect(rows).toEqual([{ k: "a", v: 1 }]);
  });

  it("runs a scheduled alarm on demand", async () => {
    const stub = env.WORKFLOW_SCHEDULER.getByName("smoke-alarm");
    const alarmSpy = vi.spyOn(WorkflowScheduler.prototype, "alarm");
    await runInDurableObject(stub, async (_instance, state) => {
      await state.storage.setAlarm(Date.now() + 60_000);
    });
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect(alarmSpy).toHaveBeenCalledTimes(1);
    // The alarm was consumed: nothing left to run.
    expect(await runDurableObjectAlarm(stub)).toBe(false);
  });
});

describe("D1 index", () => {
  it("has the migrated workflows table", async () => {
    await env.DB.prepare(
      "INSERT INTO workflows (tenant, id, name, status, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)",
    )
      .bind("acme", "wf_1", "smoke", "running", 1, 1)
      .run();
    const row = await env.DB.prepare("SELECT tenant, id, status, version, ended_at FROM workflows WHERE tenant = ?")
      .bind("acme")
      .first();
    expect(row).toEqual({ tenant: "acme", id: "wf_1", status: "running", version: 0, ended_at: null });
  });
});

describe("task queue", () => {
  it("delivers messages sent on TASKS to the queue consumer", async () => {
    const received: unknown[] = [];
    vi.spyOn(worker, "queue").mockImplementation(async (batch) => {
      for (const message of batch.messages) {
        received.push(message.body);
        message.ack();
      }
    });
    await env.TASKS.send({ kind: "smoke", n: 1 });
    await vi.waitFor(() => expect(received).toEqual([{ kind: "smoke", n: 1 }]), { timeout: 5_000 });
  });

  it("collects acks and retries from a constructed batch", async () => {
    const messages: MessageBatchMessage<{ n: number }>[] = [
      { id: "m1", timestamp: new Date(1_000), attempts: 1, body: { n: 1 } },
      { id: "m2", timestamp: new Date(2_000), attempts: 1, body: { n: 2 } },
    ];
    const batch = createMessageBatch("shepherd-tasks", messages);
    const ctx = createExecutionContext();
    const handler: ExportedHandlerQueueHandler<Env, { n: number }> = async (b) => {
      for (const message of b.messages) {
        if (message.body.n === 1) message.ack();
        else message.retry({ delaySeconds: 5 });
      }
    };
    await handler(batch, env, ctx);
    const result = await getQueueResult(batch, ctx);
    expect(result.outcome).toBe("ok");
    expect(result.explicitAcks).toEqual(["m1"]);
    // Note: this helper reports which messages were retried but not their delaySeconds.
    expect(result.retryMessages.map((m) => m.msgId)).toEqual(["m2"]);
  });
});
