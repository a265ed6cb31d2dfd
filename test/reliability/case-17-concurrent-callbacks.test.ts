import { runInDurableObject } from "cloudflare:test";
import { exports } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { api, historyOf, start, uniqueId, waitForStep } from "../helpers/api";
import { json, mockRemote, REMOTE } from "../helpers/remote";
import { schedulerStub } from "../helpers/scheduler";
import { FAST } from "../engine/fixtures";

afterEach(() => vi.restoreAllMocks());

function callTask(token: string, action: string, body: unknown) {
  return exports.default.fetch(`http://shepherd.test/v1/tasks/${token}/${action}`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
}

const versionOf = (id: string) =>
  runInDurableObject(schedulerStub(id), (_, state) => state.storage.sql.exec<{ version: number }>("SELECT version FROM workflow").one().version);

describe("case 17: concurrent callbacks", () => {
  it("applies 50 concurrent heartbeats and racing completions with no lost update and exactly one terminal transition", async () => {
    const remote = mockRemote(() => json({}, 202));
    const id = uniqueId();
    await start({ name: "race", defaults: { ...FAST, timeouts: { ...FAST.timeouts, heartbeatMs: 60_000, startToCloseMs: 60_000 } }, steps: [{ id: "job", action: { type: "http", url: `${REMOTE}/job` } }] }, { id });
    await waitForStep(id, "job", "waiting");
    const token = remote.calls[0]!.headers["shepherd-task-token"]!;
    const versionBefore = await versionOf(id);

    const heartbeats = Array.from({ length: 50 }, (_, i) => callTask(token, "heartbeat", { progress: { beat: i } }));
    const completions = Array.from({ length: 5 }, (_, i) => callTask(token, "complete", { output: { by: i } }));
    const failures = Array.from({ length: 5 }, () => callTask(token, "fail", { error: { message: "late", retryable: false } }));
    const responses = await Promise.all([...heartbeats, ...completions, ...failures]);
    const statuses = responses.map((response) => response.status);

    // Every heartbeat before the end was taken; every report after the first that ended the step is 410 gone.
    expect(statuses.every((status) => status === 200 || status === 410)).toBe(true);
    const reportStatuses = statuses.slice(50);
    expect(reportStatuses.filter((status) => status === 200)).toHaveLength(1);

    const workflow = (await api("GET", `/v1/workflows/${id}`)).body;
    const history = await historyOf(id);
    const terminal = history.filter((event) => ["workflow_completed", "workflow_failed", "workflow_compensated"].includes(event.type));
    expect(terminal).toHaveLength(1);
    // The one report that won decided the outcome; the history is strictly ordered.
    expect(["completed", "compensated", "failed"]).toContain(workflow.status);
    expect(history.map((event) => event.seq)).toEqual([...history.map((event) => event.seq)].sort((a, b) => a - b));
    // No lost update: each heartbeat that was applied raised the version by one, plus the one report that ended the step.
    const applied = statuses.slice(0, 50).filter((status) => status === 200).length;
    expect(await versionOf(id)).toBe(versionBefore + applied + 1);
  });
});
