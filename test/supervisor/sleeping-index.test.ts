import { afterEach, describe, expect, it, vi } from "vitest";
import { getWorkflow, start, uniqueId, waitForStep } from "../helpers/api";
import { indexRow } from "../helpers/index-db";
import { PATIENT } from "../helpers/policies";
import { json, mockRemote, REMOTE } from "../helpers/remote";
import { backdate, fireAlarm, runCron } from "../helpers/time";

afterEach(() => vi.restoreAllMocks());

const HOUR = 3_600_000;
const WEEK = 7 * 24 * HOUR;

/** An action, then a week's sleep, then another action: the deadline jumps a week out, then back. */
async function sleepyWorkflow() {
  const remote = mockRemote(() => json({ ok: true }));
  const id = uniqueId();
  await start(
    {
      name: "sleepy",
      defaults: PATIENT,
      steps: [
        { id: "before", action: { type: "http", url: `${REMOTE}/before` } },
        { id: "nap", sleep: { durationMs: WEEK } },
        { id: "after", action: { type: "http", url: `${REMOTE}/after` } },
      ],
    },
    { id },
  );
  await waitForStep(id, "nap", "sleeping");
  return { id, remote };
}

describe("the index deadline of a sleeping workflow (the sweep's view of it)", () => {
  it("moves out to the wake time when a long sleep starts, so the sweep does not wake it for nothing", async () => {
    const { id } = await sleepyWorkflow();
    const wakeAt = (await getWorkflow(id)).steps[1].sleepingUntil;
    // Written after the commit: the status did not change, but the deadline moved by far more than an hour.
    await vi.waitFor(async () => expect((await indexRow(id))?.next_deadline_at).toBe(wakeAt));

    await runCron(Date.now() + 2 * HOUR);
    expect((await getWorkflow(id)).steps[1].status).toBe("sleeping");
  });

  it("moves back within the hour once the sleep wakes and the next step runs, so a lost alarm is found in time", async () => {
    // The next step's request never answers: it stays running, under its heartbeat deadline.
    mockRemote(() => new Promise<Response>(() => undefined));
    const id = uniqueId();
    await start(
      {
        name: "sleepy-then-slow",
        defaults: PATIENT,
        steps: [
          { id: "nap", sleep: { durationMs: WEEK } },
          { id: "slow", action: { type: "http", url: `${REMOTE}/slow` } },
        ],
      },
      { id },
    );
    await vi.waitFor(async () => expect((await indexRow(id))?.next_deadline_at).toBeGreaterThan(Date.now() + WEEK - HOUR));
    await backdate(id, { ms: WEEK });
    await fireAlarm(id);
    await vi.waitFor(async () => expect((await indexRow(id))?.next_deadline_at).toBeLessThan(Date.now() + HOUR));
  });
});
