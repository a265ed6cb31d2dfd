import { describe, expect, it } from "vitest";
import { claimEagerly, transition } from "../../src/domain/machine";
import { claimed, describeEffects, describeHistory, fixedRandom, plan, Run, step, stepOf, succeeded, undoable, failedPermanently } from "./builders";

/** A report applied the way the object applies it for an agent that takes `limit` follow-ups. */
function reportEagerly(run: Run, event: Parameters<typeof transition>[1], limit: number) {
  const result = claimEagerly(transition(run.state, event, run.now, fixedRandom), limit, run.now);
  run.state = result.state;
  return result;
}

describe("claimEagerly (eager dispatch)", () => {
  it("hands the next step of a sequence to the reporting agent, claimed, instead of enqueueing it", () => {
    const run = new Run(plan([step("a"), step("b"), step("c")]));
    run.send(claimed("a"));
    const result = reportEagerly(run, succeeded("a"), 4);
    expect(result.claimed.map((task) => `${task.stepId}#${task.attempt}`)).toEqual(["b#1"]);
    expect(describeEffects(result.effects)).toEqual([]);
    expect(describeHistory(result.history)).toEqual(["step_succeeded a#1", "step_scheduled b#1", "step_started b#1"]);
    expect(stepOf(result.state, "b")).toMatchObject({ status: "running", attempt: 1, attempts: [{ n: 1, status: "running", startedAt: run.now }] });
    expect(result.claimed[0]).toMatchObject({ idempotencyKey: `${run.state.id}:b`, deadlineAt: run.now + 5_000 });
    expect(result.reply).toEqual({ ok: true });
  });

  it("takes at most `limit` of a fan-out and leaves the rest to the queue", () => {
    const run = new Run(plan([step("a"), step("b", { dependsOn: ["a"] }), step("c", { dependsOn: ["a"] }), step("d", { dependsOn: ["a"] })]));
    run.send(claimed("a"));
    const result = reportEagerly(run, succeeded("a"), 2);
    expect(result.claimed.map((task) => task.stepId)).toEqual(["b", "c"]);
    expect(describeEffects(result.effects)).toEqual(["enqueue d#1 action"]);
    expect(stepOf(result.state, "d").status).toBe("scheduled");
  });

  it("changes nothing about the transition when the agent takes no follow-ups", () => {
    const run = new Run(plan([step("a"), step("b")]));
    run.send(claimed("a"));
    const plain = transition(run.state, succeeded("a"), run.now, fixedRandom);
    const result = claimEagerly(plain, 0, run.now);
    expect(result.claimed).toEqual([]);
    expect(result.state).toEqual(plain.state);
    expect(describeEffects(result.effects)).toEqual(["enqueue b#1 action"]);
  });

  it("hands over compensations too, in reverse order, one at a time", () => {
    const run = new Run(plan([undoable("a"), undoable("b"), step("c")]));
    run.send(claimed("a"));
    run.send(succeeded("a"));
    run.send(claimed("b"));
    run.send(succeeded("b"));
    run.send(claimed("c"));
    const result = reportEagerly(run, failedPermanently("c"), 4);
    expect(result.claimed.map((task) => `${task.stepId}#${task.attempt} ${task.kind}`)).toEqual(["b#2 compensation"]);
    expect(result.state.status).toBe("compensating");
  });

  it("returns nothing for a report that is refused", () => {
    const run = new Run(plan([step("a"), step("b")]));
    run.send(claimed("a"));
    run.send(succeeded("a"));
    const result = reportEagerly(run, succeeded("a"), 4);
    expect(result.claimed).toEqual([]);
    expect(result.reply).toMatchObject({ ok: false, code: "gone" });
  });
});
