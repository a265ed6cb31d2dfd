// The remote's side of the map phase: which item keys get case 27's faults, and which item keys are as the contract
// says. Plain Node, like the bench's tools tests: `npm run test:tools`.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { DEFAULT_REMOTE_FAULTS, itemFault, NO_REMOTE_FAULTS } from "../lib/faults.ts";
import { itemKey } from "../lib/map.ts";
import { isWellFormedKey, operationOf } from "../lib/remote-ledger.ts";

const keys = Array.from({ length: 20_000 }, (_, i) => itemKey("chaos-1-map-0001", i));

describe("itemFault", () => {
  it("answers 503 once for about 5 % of the item keys and hangs once for about 1 %", () => {
    const first = keys.map((key) => itemFault("1", key, 1, DEFAULT_REMOTE_FAULTS));
    const share = (fault: string): number => first.filter((f) => f === fault).length / keys.length;
    assert.ok(Math.abs(share("itemHttp503") - 0.05) < 0.006, `503 share ${share("itemHttp503")}`);
    assert.ok(Math.abs(share("itemHang") - 0.01) < 0.003, `hang share ${share("itemHang")}`);
  });

  it("faults only the key's first attempt that reaches the remote, so its retry is answered", () => {
    assert.deepEqual(new Set(keys.map((key) => itemFault("1", key, 2, DEFAULT_REMOTE_FAULTS))), new Set(["none"]));
  });

  it("draws the same fault for a key in every process, and none without remote faults", () => {
    const key = keys.find((k) => itemFault("1", k, 1, DEFAULT_REMOTE_FAULTS) === "itemHang") ?? "";
    assert.equal(itemFault("1", key, 1, DEFAULT_REMOTE_FAULTS), "itemHang");
    assert.equal(itemFault("1", key, 1, NO_REMOTE_FAULTS), "none");
  });
});

describe("isWellFormedKey", () => {
  const item = { map: "each", index: 7, item: "sku-7" };
  const caller = { kind: "action" as const, workflowId: "wf", stepId: "each#7", pathStep: "each", item };

  it("takes <workflowId>:<mapStepId>:<index> for a map's item, with the index its body names", () => {
    assert.equal(isWellFormedKey("wf:each:7", caller), true);
    assert.equal(isWellFormedKey("wf:each:8", caller), false);
    assert.equal(isWellFormedKey("wf:each#7", caller), false);
  });

  it("still takes <workflowId>:<stepId>[:compensate] for a step the path names", () => {
    assert.equal(isWellFormedKey("wf:s1", { kind: "action", workflowId: "wf", stepId: "s1", pathStep: "s1" }), true);
    assert.equal(isWellFormedKey("wf:s1:compensate", { kind: "compensation", workflowId: "wf", stepId: "s1", pathStep: "s1" }), true);
    assert.equal(isWellFormedKey("wf:s1", { kind: "action", workflowId: "wf", stepId: "s2", pathStep: "s1" }), false);
  });

  it("counts one logical operation per item, whatever step id the headers carry", () => {
    assert.equal(operationOf({ workflowId: "wf", stepId: "each#7", kind: "action", item }), "wf|each[7]|action");
    assert.equal(operationOf({ workflowId: "wf", stepId: "s1", kind: "action", item: null }), "wf|s1|action");
  });
});
