// The D1 index agrees with the objects: `GET /v1/workflows`, paged, lists every workflow once with its object's
// status. The index is written after the object commits, so it may trail it; what it still gets wrong after a
// while is the cron sweep's to repair, as production's cron would have by then.
import { mapPool, sleep } from "../../../scripts/lib/async.ts";
import type { ShepherdClient } from "../client.ts";
import type { IndexRow } from "../api-shapes.ts";
import type { Final } from "../finals.ts";
import { fail, pass, skipped } from "./check.ts";
import type { Check } from "./check.ts";

type IndexReading = { rows: Map<string, IndexRow> } | { missingApi: true; status: number } | { error: string };

interface Mismatch {
  id: string;
  object: string;
  index: string;
}

/** Pages through GET /v1/workflows and compares each row's status with the object's own. */
export async function checkIndex(client: ShepherdClient, finals: Final[], { settleMs = 10_000 }: { settleMs?: number } = {}): Promise<Check> {
  const name = "D1 index == objects";
  // The index may trail the objects, so mismatches get a short bounded time to settle before they count.
  let started = Date.now();
  let swept: { before: number; status: number } | undefined;
  let mismatches: Mismatch[] = [];
  for (let round = 0; ; round++) {
    const index = await readIndex(client, Math.ceil(finals.length / 100) + 5);
    if ("missingApi" in index) return skipped(name, `skipped (no list API: GET /v1/workflows answered ${index.status})`);
    if ("error" in index) return fail(name, index.error);
    // Re-read the objects that disagreed, in case they moved on meanwhile.
    if (round > 0) await rereadObjects(client, finals, mismatches);
    mismatches = compare(finals, index.rows);
    if (mismatches.length > 0 && !swept && Date.now() - started > settleMs) {
      // What the index still gets wrong after the settle time is the sweep's to repair (an object killed
      // between its commit and its D1 write): run it once, as production's cron would have by now.
      swept = { before: mismatches.length, status: (await client.runCronSweep()).status };
      started = Date.now();
    } else if (mismatches.length === 0 || Date.now() - started > settleMs) {
      return verdict(name, finals, index.rows, mismatches, Date.now() - started, swept);
    }
    await sleep(2_000);
  }
}

async function readIndex(client: ShepherdClient, maxPages: number): Promise<IndexReading> {
  const rows = new Map<string, IndexRow>();
  let cursor: string | null | undefined;
  for (let page = 0; page < maxPages; page++) {
    const res = await client.listWorkflows(cursor);
    if (res.status === 404 || res.status === 405) return { missingApi: true, status: res.status };
    if (res.status !== 200 || !res.value) return { error: `list answered ${res.status}: ${JSON.stringify(res.body).slice(0, 200)}` };
    for (const row of res.value.workflows) {
      if (rows.has(row.id)) return { error: `row ${row.id} listed twice (cursor paging repeats rows)` };
      rows.set(row.id, row);
    }
    cursor = res.value.nextCursor;
    if (!cursor) return { rows };
  }
  return { error: `more than ${maxPages} pages` };
}

async function rereadObjects(client: ShepherdClient, finals: Final[], mismatches: readonly Mismatch[]): Promise<void> {
  await mapPool(mismatches, 10, async (m: Mismatch) => {
    const f = finals.find((x) => x.id === m.id);
    const res = await client.getWorkflow(m.id);
    if (f && res.status === 200 && res.value) f.view = res.value;
  });
}

function compare(finals: readonly Final[], rows: Map<string, IndexRow>): Mismatch[] {
  const mismatches: Mismatch[] = [];
  for (const f of finals) {
    if (!f.view) continue;
    const row = rows.get(f.id);
    if (!row) mismatches.push({ id: f.id, object: f.view.status, index: "(missing)" });
    else if (row.status !== f.view.status) mismatches.push({ id: f.id, object: f.view.status, index: row.status });
  }
  return mismatches;
}

function verdict(name: string, finals: readonly Final[], rows: Map<string, IndexRow>, mismatches: Mismatch[], settledMs: number, swept: { before: number; status: number } | undefined): Check {
  const ours = new Set(finals.map((f) => f.id));
  const extra = [...rows.keys()].filter((id) => !ours.has(id));
  const detail =
    `${rows.size} rows, ${mismatches.length} mismatch(es), ${extra.length} unknown row(s)` +
    (mismatches.length === 0 && settledMs > 1_000 ? ` (settled after ${settledMs} ms)` : "") +
    (swept ? `; ${swept.before} stale after the settle time, the cron sweep run (answered ${swept.status}), ${mismatches.length} left` : "");
  return (mismatches.length || extra.length ? fail : pass)(name, detail, { mismatches: mismatches.slice(0, 30), extra: extra.slice(0, 10), settledMs, swept });
}
