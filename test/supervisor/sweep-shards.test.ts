import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { sweepOverdueWorkflows } from "../../src/supervisor/sweep";
import { getWorkflow, start } from "../helpers/api";
import { indexRow, uniqueIdOnShard } from "../helpers/index-db";
import { watchSends } from "../helpers/queue";
import { json, mockRemote } from "../helpers/remote";
import { alarmOf } from "../helpers/scheduler";
import { backdate } from "../helpers/time";
import { loseAlarm, strandedDefinition } from "../helpers/stranded";

afterEach(() => vi.restoreAllMocks());

/** The default grace period (SWEEP_GRACE_MS is not set in the tests). */
const GRACE_MS = 60_000;
const SCHEDULE_TO_START_MS = 20_000;

/**
 * One workflow indexed on each shard, each with its first message lost and its alarm then deleted, moved well past
 * its schedule-to-start deadline: only the sweep can move them now.
 */
async function strandedOnBothShards(): Promise<[string, string]> {
  const ids: [string, string] = [uniqueIdOnShard(0), uniqueIdOnShard(1)];
  const held = new Set<string>();
  watchSends((message) => {
    if (!ids.includes(message.workflowId) || held.has(message.workflowId)) return false;
    held.add(message.workflowId);
    return true;
  });
  for (const id of ids) {
    await start(strandedDefinition(SCHEDULE_TO_START_MS), { id });
    await vi.waitFor(async () => expect((await indexRow(id))?.next_deadline_at).toEqual(expect.any(Number)));
    await loseAlarm(id);
    await backdate(id, { ms: SCHEDULE_TO_START_MS * 2 });
  }
  return ids;
}

/** A sweep's time at which every given workflow's indexed deadline is past the grace period. */
async function pastDeadlinesOf(...ids: string[]): Promise<number> {
  const deadlines = await Promise.all(ids.map(async (id) => (await indexRow(id))!.next_deadline_at!));
  return Math.max(Date.now(), ...deadlines) + GRACE_MS + 1;
}

/** Woken, the workflow timed its first attempt out and armed its alarm again for the retry. */
async function expectWoken(id: string) {
  const { steps } = await getWorkflow(id);
  expect(steps[0].attempts[0].status).toBe("timed_out");
  expect(await alarmOf(id)).not.toBeNull();
}

describe("the sweep over the index shards", () => {
  it("wakes an overdue workflow indexed on shard 1 as it does one on shard 0", async () => {
    mockRemote(() => json({ ok: true }));
    const [first, second] = await strandedOnBothShards();

    const result = await sweepOverdueWorkflows(env, await pastDeadlinesOf(first, second));

    expect(result).toMatchObject({ failed: 0, unreadShards: 0 });
    expect(result.woken).toBeGreaterThanOrEqual(2);
    await expectWoken(first);
    await expectWoken(second);
  });

  it("still sweeps shard 0 when shard 1's query fails, and says a shard went unread", async () => {
    mockRemote(() => json({ ok: true }));
    const [first, second] = await strandedOnBothShards();
    const prepare = env.DB_1.prepare.bind(env.DB_1);
    vi.spyOn(env.DB_1, "prepare").mockImplementation((query: string) => {
      if (/next_deadline_at < \?/.test(query)) throw new Error("D1_ERROR: injected outage");
      return prepare(query);
    });
    const errors = vi.spyOn(console, "error");
    const sweepAt = await pastDeadlinesOf(first, second);

    const result = await sweepOverdueWorkflows(env, sweepAt);

    expect(result.unreadShards).toBe(1);
    expect(errors.mock.calls.some(([line]) => String(line).includes("sweep could not read an index shard"))).toBe(true);
    await expectWoken(first);
    expect((await getWorkflow(second)).steps[0].attempts[0].status).toBe("scheduled");
    expect(await alarmOf(second)).toBeNull();

    // Once shard 1 answers again, the next sweep wakes its workflow.
    vi.mocked(env.DB_1.prepare).mockRestore();
    expect((await sweepOverdueWorkflows(env, sweepAt)).unreadShards).toBe(0);
    await expectWoken(second);
  });
});
