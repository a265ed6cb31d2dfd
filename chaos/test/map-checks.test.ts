// The map phase's checks against the facts they read: the remote's ledger, the items' pages and the answers' sizes.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { MapItemView, WorkflowView } from "../lib/api-shapes.ts";
import { checkMapAnswerSize, checkMapEffects, checkMapOrder, checkMapsCompleted, MAX_ANSWER_BYTES } from "../lib/checks/map.ts";
import type { Final } from "../lib/finals.ts";
import { buildMapWorkflows, itemKey } from "../lib/map.ts";
import { stalledFor } from "../lib/map-driver.ts";
import type { MapRecord } from "../lib/map-driver.ts";
import type { KeyRecord, RemoteStats } from "../lib/remote-ledger.ts";

const [wf] = buildMapWorkflows({ seed: "1", sizes: [4], remoteUrl: "http://127.0.0.1:1" });
assert.ok(wf);
const id = wf.id;
const effectOf = (i: number) => ({ effectId: `eff_${i}`, step: `each#${i}`, index: i, item: `sku-${i}` });

function keyRecord(index: number, applied = 1, key = itemKey(id, index)): KeyRecord {
  return {
    key, kind: "action", workflowId: id, stepId: `each#${index}`, wellFormed: key === itemKey(id, index), item: { map: "each", index, item: `sku-${index}` },
    requests: applied, attempts: [1], applied, replays: 0, replaysAfterDelivered: 0, abandoned: 0, faults: {}, delivered: true,
    appliedAt: applied ? 1 : null, appliedBody: applied ? effectOf(index) : null, log: [], jobs: [], lost: null,
  };
}

function ledger(records: KeyRecord[]): RemoteStats {
  return { keys: Object.fromEntries(records.map((r) => [r.key, r])) } as unknown as RemoteStats;
}

const items = (n = 4): MapItemView[] => Array.from({ length: n }, (_, i) => ({ index: i, status: "succeeded", attempt: 1, output: effectOf(i) }));
const record = (list: MapItemView[] | null, bytes = [2_000], statusWhenRead = "completed"): MapRecord => ({
  id, readings: bytes.map((b, at) => ({ at, status: "running", bytes: b, items: null })), items: list, itemsError: list ? null : "page 1 answered 0", statusWhenRead,
});

function final(status: string, output: unknown, succeeded = 4): Final {
  const step = { id: "each", status: status === "completed" ? "succeeded" : "running", attempt: 0, attempts: [], output, items: { total: 4, pending: 0, running: 4 - succeeded, succeeded, failed: 0, skipped: 0 } };
  const view: WorkflowView = { id, name: "chaos-map", status, steps: [step], createdAt: 0, updatedAt: 0 };
  return { id, kind: "map", started: true, view, readStatus: 200, events: [], language: undefined };
}

const full = ledger([0, 1, 2, 3].map((i) => keyRecord(i)));

describe("the map checks", () => {
  it("pass a map that completed every item once, in order, with a small answer", () => {
    const finals = [final("completed", items().map((i) => i.output))];
    const checks = [checkMapsCompleted([wf], finals), checkMapEffects([wf], full), checkMapOrder([wf], [record(items())], finals, full), checkMapAnswerSize([wf], [record(items())])];
    assert.deepEqual(checks.map((c) => c.status), ["pass", "pass", "pass", "pass"]);
  });

  it("fail a map workflow that did not complete all of its items", () => {
    assert.equal(checkMapsCompleted([wf], [final("running", undefined, 3)]).status, "fail");
  });

  it("fail an item applied twice, an item with no effect and an item under a key the contract does not give", () => {
    const twice = checkMapEffects([wf], ledger([keyRecord(0, 2), keyRecord(1), keyRecord(3), keyRecord(2, 1, `${id}:each#2`)]));
    assert.equal(twice.status, "fail");
    const kinds = (twice.data?.violations as { kind: string }[]).map((v) => v.kind);
    assert.deepEqual(kinds, ["item without an effect", "item applied twice", "item key not as the contract says"]);
  });

  it("fail items listed out of order, or whose output is not their own key's effect", () => {
    const swapped = items();
    [swapped[1], swapped[2]] = [swapped[2]!, swapped[1]!];
    assert.equal(checkMapOrder([wf], [record(swapped)], [final("completed", { itemsAt: "/v1/…" })], full).status, "fail");
    const foreign = items().map((item) => (item.index === 3 ? { ...item, output: { ...effectOf(3), effectId: "eff_other" } } : item));
    assert.equal(checkMapOrder([wf], [record(foreign)], [final("completed", { itemsAt: "/v1/…" })], full).status, "fail");
  });

  it("fail a step output that is not the items' outputs in order, and items that could not be read", () => {
    const reversed = items().map((i) => i.output).reverse();
    assert.equal(checkMapOrder([wf], [record(items())], [final("completed", reversed)], full).status, "fail");
    assert.equal(checkMapOrder([wf], [record(null)], [final("completed", undefined)], full).status, "fail");
  });

  it("fail items read before the map ended (the driver gave up on it), naming that, not each item read mid-map", () => {
    const midMap = items().map((item) => (item.index === 2 ? { index: 2, status: "running", attempt: 1 } : item));
    const check = checkMapOrder([wf], [record(midMap, [2_000], "running")], [final("completed", items().map((i) => i.output))], full);
    assert.equal(check.status, "fail");
    assert.deepEqual((check.data?.violations as { kind: string }[]).map((v) => v.kind), ["items read before the map ended"]);
  });

  it("fail an answer of 128 KiB or more at any reading, and a map never read", () => {
    assert.equal(checkMapAnswerSize([wf], [record(items(), [2_000, MAX_ANSWER_BYTES, 3_000])]).status, "fail");
    assert.equal(checkMapAnswerSize([wf], [record(items(), [])]).status, "fail");
  });
});

describe("stalledFor", () => {
  const reading = (at: number, succeeded: number | null) => ({ at, status: "running", bytes: 0, items: succeeded === null ? null : { total: 4, pending: 0, running: 0, succeeded, failed: 0, skipped: 0 } });

  it("counts from the first of the readings that say the same as the last", () => {
    assert.equal(stalledFor([reading(0, 1), reading(1_000, 2), reading(2_000, 2), reading(3_000, 2)], 25_000), 24_000);
  });

  it("is 0 while the map moves or before it was read twice, and counts a map without counts too", () => {
    assert.equal(stalledFor([reading(0, 1), reading(1_000, 2)], 1_000), 0);
    assert.equal(stalledFor([reading(0, 1)], 30_000), 0);
    assert.equal(stalledFor([reading(0, null), reading(5_000, null)], 30_000), 30_000);
  });
});
