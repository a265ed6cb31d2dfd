import { exports } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { historyOf, start, uniqueId, waitForStatus } from "../helpers/api";
import { json, mockRemote, REMOTE } from "../helpers/remote";
import { FAST } from "../engine/fixtures";

afterEach(() => vi.restoreAllMocks());

/** A remote service's call on its task token, as a client would make it (no API token: the task token is the credential). */
function callTask(token: string, action: "heartbeat" | "complete", body: unknown) {
  return exports.default.fetch(`http://shepherd.test/v1/tasks/${token}/${action}`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
}

describe("case 4: heartbeat skipped on attempt 1 (omes)", () => {
  it("times out the silent attempt 1, succeeds on attempt 2, which is given attempt 1's last heartbeat details", async () => {
    const heartbeatMs = 300;
    const seenProgress: (string | undefined)[] = [];
    const remote = mockRemote((call, n) => {
      const token = call.headers["shepherd-task-token"]!;
      seenProgress.push(call.headers["shepherd-progress"]);
      if (n === 1) {
        // Takes the job, reports how far it got once, then falls silent for good.
        setTimeout(() => void callTask(token, "heartbeat", { progress: { page: 3 } }), 20);
      } else {
        // Attempt 2 resumes from page 3, heartbeats and finishes.
        setTimeout(async () => {
          await callTask(token, "heartbeat", { progress: { page: 4 } });
          await callTask(token, "complete", { output: { pages: 5 } });
        }, 20);
      }
      return json({}, 202);
    });
    const id = uniqueId();
    await start(
      { name: "omes-heartbeat", defaults: { ...FAST, timeouts: { ...FAST.timeouts, heartbeatMs } }, steps: [{ id: "report", action: { type: "http", url: `${REMOTE}/report` } }] },
      { id },
    );

    const workflow = await waitForStatus(id, "completed");
    const step = workflow.steps[0];
    expect(step.attempts.map((attempt: { status: string }) => attempt.status)).toEqual(["timed_out", "succeeded"]);
    expect(step.output).toEqual({ pages: 5 });
    expect(step.progress).toEqual({ page: 4 });
    // Attempt 1 had no details to resume from; attempt 2 got attempt 1's last ones.
    expect(seenProgress).toEqual([undefined, JSON.stringify({ page: 3 })]);
    expect(remote.requestsFor(`${id}:report`)).toBe(2);

    const history = await historyOf(id);
    const missed = history.find((event) => event.type === "step_heartbeat_missed");
    expect(missed).toMatchObject({ attempt: 1, data: { timeout: "heartbeat" } });
    expect(missed!.data.overdueMs).toBeLessThan(1_000);
    // Attempt 1 was silent for the whole heartbeat timeout after its last heartbeat before it was given up.
    const started = history.find((event) => event.type === "step_started" && event.attempt === 1)!;
    expect(missed!.at - started.at).toBeGreaterThanOrEqual(heartbeatMs);
  });
});
