import { afterEach, describe, expect, it, vi } from "vitest";
import { WorkflowScheduler } from "../../src/workflow/object";
import { getWorkflow, historyOf, start, uniqueId, waitForStatus } from "../helpers/api";
import { PATIENT } from "../helpers/policies";
import { watchSends } from "../helpers/queue";
import { json, mockRemote, REMOTE } from "../helpers/remote";
import { callTask } from "../helpers/tasks";
import { backdate, elapse } from "../helpers/time";

const { heartbeatMs } = PATIENT.timeouts;
const backoffMs = PATIENT.retry.initialIntervalMs;

/** Waits until the step holds these heartbeat details: the remote's heartbeat has arrived. */
const progressReached = (id: string, progress: unknown) => vi.waitFor(async () => expect((await getWorkflow(id)).steps[0].progress).toEqual(progress));

afterEach(() => vi.restoreAllMocks());

describe("case 4: heartbeat skipped on attempt 1 (omes)", () => {
  it("times out the silent attempt 1, succeeds on attempt 2, which is given attempt 1's last heartbeat details", async () => {
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
      { name: "omes-heartbeat", defaults: PATIENT, steps: [{ id: "report", action: { type: "http", url: `${REMOTE}/report` } }] },
      { id },
    );
    // Attempt 1's one heartbeat arrives; then a whole heartbeat timeout passes in silence, then the backoff.
    await progressReached(id, { page: 3 });
    await elapse(id, heartbeatMs);
    await elapse(id, backoffMs);

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

  it("keeps attempt 1 silent for twice the heartbeat timeout; attempt 2's claim, request and the API all carry attempt 1's last details, and attempt 1's late calls are refused", async () => {
    const id = uniqueId();
    const claims = vi.spyOn(WorkflowScheduler.prototype, "claim");
    // Attempt 2 waits in the queue until attempt 1 has been silent for 2× the heartbeat timeout.
    const sends = watchSends((message) => message.workflowId === id && message.attempt === 2);
    const tokens: string[] = [];
    const seenProgress: (string | undefined)[] = [];
    const remote = mockRemote((call, n) => {
      const token = call.headers["shepherd-task-token"]!;
      tokens.push(token);
      seenProgress.push(call.headers["shepherd-progress"]);
      setTimeout(async () => {
        if (n === 1) {
          // Attempt 1 reports progress twice, then stops heartbeating.
          await callTask(token, "heartbeat", { progress: { page: 1 } });
          await callTask(token, "heartbeat", { progress: { page: 3 } });
        } else {
          // Attempt 2 heartbeats as it goes, and finishes.
          await callTask(token, "heartbeat", { progress: { page: 4 } });
          await callTask(token, "complete", { output: { pages: 5 } });
        }
      }, 10);
      return json({ accepted: true }, 202);
    });
    await start(
      { name: "omes-heartbeat-2x", defaults: PATIENT, steps: [{ id: "report", action: { type: "http", url: `${REMOTE}/report` } }] },
      { id },
    );
    // Attempt 1 heartbeats twice, then falls silent: its heartbeat deadline passes, then the retry's backoff.
    await progressReached(id, { page: 3 });
    await elapse(id, heartbeatMs);
    await elapse(id, backoffMs);

    expect(sends.of(id).map((entry) => entry.message.attempt)).toEqual([1, 2]);
    const retrying = await getWorkflow(id);
    expect(retrying.steps[0].attempts[0]).toMatchObject({ status: "timed_out", error: { timeout: "heartbeat" } });
    // The details survive the timeout, readable through the API.
    expect(retrying.steps[0].progress).toEqual({ page: 3 });
    const lastHeartbeatAt: number = retrying.steps[0].lastHeartbeatAt;
    await backdate(id, { ms: Math.max(0, lastHeartbeatAt + 2 * heartbeatMs - Date.now()) });

    // Silent for 2× the timeout, attempt 1 wakes up: its heartbeat is refused and does not overwrite the details.
    const lateHeartbeat = await callTask(tokens[0]!, "heartbeat", { progress: { page: 99 } });
    expect(lateHeartbeat).toMatchObject({ status: 409, body: { error: { code: "stale_attempt" } } });
    expect((await getWorkflow(id)).steps[0].progress).toEqual({ page: 3 });

    await sends.release();
    const workflow = await waitForStatus(id, "completed");
    const step = workflow.steps[0];
    expect(step.attempts.map((attempt: { status: string }) => attempt.status)).toEqual(["timed_out", "succeeded"]);
    expect(step.output).toEqual({ pages: 5 });
    expect(step.progress).toEqual({ page: 4 });
    // The agent's claim of attempt 2 returned attempt 1's last details, and the agent passed them to the remote.
    const claimed = await Promise.all(claims.mock.calls.map(async (args, i) => ({ args, reply: await claims.mock.results[i]!.value })));
    expect(claimed.map(({ args, reply }) => [args[1], reply.ok, reply.task?.progress])).toEqual([
      [1, true, undefined],
      [2, true, { page: 3 }],
    ]);
    expect(seenProgress).toEqual([undefined, JSON.stringify({ page: 3 })]);
    expect(remote.requestsFor(`${id}:report`)).toBe(2);
    // Attempt 1's completion after all this is refused too.
    expect((await callTask(tokens[0]!, "complete", { output: { pages: 3 } })).status).toBe(410);
  });
});
