import { afterEach, describe, expect, it, vi } from "vitest";
import { clearInjectedFaults, injectFault } from "../../src/dev/faults";
import { historyOf, start, uniqueId, waitForStatus } from "../helpers/api";
import { indexRow } from "../helpers/index-db";
import { json, mockRemote, REMOTE } from "../helpers/remote";
import { FAST } from "../engine/fixtures";

afterEach(() => {
  clearInjectedFaults();
  vi.restoreAllMocks();
});

describe("case 1: agent crash", () => {
  it("times out the attempt whose agent died after claiming it, at the heartbeat deadline, and retries it with a new token after backoff", async () => {
    const remote = mockRemote(() => json({ charged: true }));
    // The first agent to claim an attempt dies silently: no request, no heartbeat, no report.
    injectFault("agentDiesAfterClaim", { probability: 1, times: 1 });
    const heartbeatMs = 250;
    const id = uniqueId();
    await start(
      {
        name: "agent-crash",
        defaults: { ...FAST, retry: { ...FAST.retry, initialIntervalMs: 100 }, timeouts: { ...FAST.timeouts, heartbeatMs } },
        steps: [{ id: "charge", action: { type: "http", url: `${REMOTE}/charge` } }],
      },
      { id },
    );

    const workflow = await waitForStatus(id, "completed");
    const [first, second] = workflow.steps[0].attempts;
    expect([first.status, second.status]).toEqual(["timed_out", "succeeded"]);
    expect(first.error).toMatchObject({ timeout: "heartbeat", retryable: true });
    // The retry waited out its backoff after the timeout.
    expect(second.scheduledAt - first.endedAt).toBeGreaterThanOrEqual(100);

    const history = await historyOf(id);
    const missed = history.find((event) => event.type === "step_heartbeat_missed")!;
    expect(missed).toMatchObject({ stepId: "charge", attempt: 1 });
    expect(missed.data.overdueMs).toBeLessThan(1_000);
    expect(history.map((event) => event.type)).toContain("step_retry_scheduled");

    // One request reached the remote (from attempt 2), carrying attempt 2's own token.
    expect(remote.calls).toHaveLength(1);
    expect(remote.calls[0]!.headers["shepherd-attempt"]).toBe("2");
    const [payload] = remote.calls[0]!.headers["shepherd-task-token"]!.split(".");
    expect(JSON.parse(atob(payload!.replace(/-/g, "+").replace(/_/g, "/")))).toEqual(["default", id, "charge", 2]);

    // The index follows: the workflow is listed with its final status.
    await vi.waitFor(async () => expect((await indexRow(id))?.status).toBe("completed"));
  });
});
