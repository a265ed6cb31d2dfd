// The soak's restarter: the phases' hooks run before the kill, those asked to run last only once the others settled,
// and every hook's word joins the restart's reason.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { sleep } from "../../scripts/lib/async.ts";
import { restarter } from "../lib/restart.ts";

describe("the restarter", () => {
  it("runs the last hooks once the others have settled, then kills, and says what each hook set up", async () => {
    const order: string[] = [];
    const shepherd = { restart: async () => void order.push("kill"), stop: async () => undefined };
    const restarts = restarter(shepherd, Date.now(), () => {});
    restarts.lastBeforeKill(async () => (order.push("last"), "sent last"));
    restarts.beforeKill(async () => (await sleep(50), order.push("slow"), "a slow wave"));
    restarts.beforeKill(async () => (order.push("quick"), null));
    await restarts.restart("asked");
    assert.deepEqual(order, ["quick", "slow", "last", "kill"]);
    assert.equal(restarts.record()?.reason, "asked; a slow wave; sent last");
  });
});
