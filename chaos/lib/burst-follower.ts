// Following the burst's thousands of workflows the way the regular driver does (each polled every ≤ 1 s) would
// be a load of its own, and the harness's load must not be what the soak measures. So the follower asks the D1
// index, a page of 100 rows per request, which of them look ended, confirms those on their objects, and reads
// a few others each round (least recently read first) in case the index lags an object.
import { mapPool, sleep } from "../../scripts/lib/async.ts";
import { isTerminal } from "./client.ts";
import type { ShepherdClient } from "./client.ts";
import type { WorkflowResult } from "./results.ts";

/** Pause between follower rounds; each round is ≤ (started / 100 + 5) index pages and ≤ MAX_READS_PER_ROUND reads. */
const FOLLOW_INTERVAL_MS = 3_000;
const MAX_READS_PER_ROUND = 150;
/** Objects read per round although the index does not call them ended (an index write can fail or lag). */
const ROTATION_PER_ROUND = 20;
const READ_CONCURRENCY = 4;

export interface BurstResult extends WorkflowResult {
  lastReadAt: number;
}

/** The follower's own figures, part of the burst's summary. */
export interface FollowCounts {
  followRounds: number;
  indexPages: number;
  objectReads: number;
  indexErrors: number;
}

/** What the follower shares with the starts: the results, the workflows started and not seen ended, its figures. */
export interface BurstFollow {
  client: ShepherdClient;
  /** The definition's name, by which the index lists the burst. */
  name: string;
  results: Map<string, BurstResult>;
  open: Set<string>;
  counts: FollowCounts;
  deadline: number;
  paused: () => boolean;
  /** Whether every start has been answered: until then an empty `open` is no end. */
  startsDone: () => boolean;
}

/** Rounds until every started workflow was seen ended or `deadline` passes; skips rounds while `paused()`. */
export async function followBurst(follow: BurstFollow): Promise<void> {
  const { open, results, deadline } = follow;
  while (Date.now() < deadline && (!follow.startsDone() || open.size > 0)) {
    await sleep(Math.min(FOLLOW_INTERVAL_MS, Math.max(0, deadline - Date.now())));
    if (follow.paused() || open.size === 0) continue;
    follow.counts.followRounds += 1;
    const index = await readIndex(follow);
    const ended = index ? [...open].filter((id) => isTerminal(index.get(id))) : [];
    const endedSet = new Set(ended);
    const rotation = [...open]
      .filter((id) => !endedSet.has(id))
      .sort((a, b) => (results.get(a)?.lastReadAt ?? 0) - (results.get(b)?.lastReadAt ?? 0))
      .slice(0, ROTATION_PER_ROUND);
    const reads = [...ended.slice(0, MAX_READS_PER_ROUND - rotation.length), ...rotation];
    await mapPool(reads, READ_CONCURRENCY, (id: string) => readObject(follow, id));
  }
}

/** Every burst row of the index, id → status; null when a page did not come back (try again next round). */
async function readIndex({ client, name, results, counts }: BurstFollow): Promise<Map<string, string> | null> {
  const rows = new Map<string, string>();
  let cursor: string | null | undefined;
  const maxPages = Math.ceil(results.size / 100) + 5;
  for (let page = 0; page < maxPages; page++) {
    const { value } = await client.listWorkflows(cursor, { name });
    counts.indexPages += 1;
    if (!value) {
      counts.indexErrors += 1;
      return null;
    }
    for (const row of value.workflows) rows.set(row.id, row.status);
    cursor = value.nextCursor;
    if (!cursor) break;
  }
  return rows;
}

async function readObject({ client, results, open, counts }: BurstFollow, id: string): Promise<void> {
  const result = results.get(id);
  if (!result) return;
  const { value: view } = await client.getWorkflow(id);
  counts.objectReads += 1;
  result.polls += 1;
  result.lastReadAt = Date.now();
  if (!view) {
    result.pollErrors += 1;
    return;
  }
  result.status = view.status;
  if (isTerminal(view.status)) {
    result.terminal = true;
    result.observedEndAt = Date.now();
    open.delete(id);
  }
}
