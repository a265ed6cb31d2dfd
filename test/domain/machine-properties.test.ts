// Properties of the pure state machine over random DAG plans and random scripts of events: what must hold
// after every transition, whatever arrives in whatever order, and that a workflow always finishes once its
// agents behave. A failure prints the shrunk plan and the concrete events that led to it.
import fc from "fast-check";
import { describe, it } from "vitest";
import { nextDeadlineAt, startWorkflow, transition, type EventReply, type WorkflowEvent } from "../../src/domain/machine";
import { isTerminal, type WorkflowState } from "../../src/domain/machine/state";
import {
  buildPlan,
  commandsArb,
  describeEvent,
  describePlan,
  eventOf,
  planShapeArb,
  seededRandom,
  timeOf,
  type Command,
  type PlanShape,
} from "./arbitraries";
import { compensationRequested, eventReceived, resumeRequested, retryRequested, skipRequested, T0 } from "./builders";
import { activeOf, checkState, holds, oneOf, planOf, stepIn } from "./machine-state-invariants";
import { checkEffects, checkTransition, replyCode, replyOk, type Result } from "./machine-transition-invariants";

/** Runs per property; together they stay within a few seconds. */
const NUM_RUNS = { invariants: 600, coverage: 400, liveness: 400 };

/** A script played against one random plan, checking every transition; keeps a readable trace for failures. */
class Playthrough {
  state: WorkflowState;
  now = T0;
  readonly random: () => number;
  readonly trace: string[] = [];
  /** The compensation queue as it was first drawn up. */
  firstQueue?: string[];

  /** `check` runs after every transition instead of every invariant above. */
  constructor(
    readonly shape: PlanShape,
    seed: number,
    readonly check?: (before: WorkflowState, result: Result) => void,
  ) {
    this.random = seededRandom(seed);
    const started = startWorkflow({ tenant: "acme", id: "wf-prop", plan: buildPlan(shape), input: { amount: 42 }, now: T0 }, this.random);
    this.state = started.state;
    this.trace.push(`t+0 start → ${started.state.status}`);
    // Every attempt is new at the start: compare with the same steps before their first attempt.
    const unstarted = { ...started.state, steps: started.state.steps.map((s) => ({ ...s, attempt: 0, attempts: [] })) };
    this.guard(() => {
      checkState(started.state);
      checkEffects(unstarted, started as Result);
    });
  }

  send(event: WorkflowEvent, at = this.now): Result {
    this.now = Math.max(this.now, at);
    const before = this.state;
    const untouched = structuredClone(before);
    const result = transition(before, event, this.now, this.random) as Result;
    const reply = replyOk(result) ? "ok" : replyCode(result);
    this.trace.push(`t+${this.now - T0} ${describeEvent(event)} → ${String(reply)}, ${result.state.status}${result.changed ? "" : " (unchanged)"}`);
    if (!before.compensation && result.state.compensation) this.firstQueue = [...result.state.compensation.queue];
    this.guard(() => {
      if (this.check) return this.check(before, result);
      checkTransition(before, untouched, event, this.now, result);
      checkState(result.state);
      this.checkSagaOutcome(result.state);
    });
    this.state = result.state;
    return result;
  }

  play(commands: Command[]): this {
    for (const command of commands) this.send(eventOf(command, this.state), timeOf(command, this.state, this.now));
    return this;
  }

  /** Compensated or cancelled: every step that was queued for compensation was compensated or skipped. */
  private checkSagaOutcome(state: WorkflowState): void {
    if (state.status !== "compensated" && state.status !== "cancelled") return;
    for (const id of this.firstQueue ?? []) oneOf(stepIn(state, id)?.status, ["compensated", "skipped"], `${state.status}: queued step ${id}`);
  }

  /** Rethrows with the plan and the events so far, so a shrunk counterexample reads as a script. */
  guard(check: () => void): void {
    try {
      check();
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      throw new Error(`${message}\nplan: ${describePlan(this.shape)}\nevents:\n  ${this.trace.join("\n  ")}`, { cause: error });
    }
  }
}

/**
 * A deterministic agent that claims and completes every attempt at once, and otherwise lets time run to
 * the next deadline. An operator first unblocks a workflow that waits on people, as `resolve` says, and resumes
 * a paused one; the outside world sends every event a step waits for.
 */
function helpfulAgent(run: Playthrough, resolve: "compensate" | "retry" | "skip", budget = 200): number {
  for (let events = 0; events < budget; events += 1) {
    const { state } = run;
    if (isTerminal(state.status)) return events;
    if (state.status === "needs_attention") {
      const failed = state.compensation ? stepIn(state, state.compensation.queue[0] ?? "") : state.steps.find((s) => s.status === "failed");
      if (resolve === "compensate" || !failed) run.send(compensationRequested());
      else if (resolve === "retry") run.send(retryRequested(failed.id));
      else run.send(skipRequested(failed.id, { skipped: true }));
      continue;
    }
    if (state.status === "paused") {
      run.send(resumeRequested());
      continue;
    }
    const step = state.steps.find((s) => activeOf(s));
    if (step) {
      const attempt = activeOf(step)!;
      const event: WorkflowEvent =
        attempt.status === "scheduled"
          ? { type: "AttemptClaimed", stepId: step.id, attempt: attempt.n }
          : { type: "AttemptSucceeded", stepId: step.id, attempt: attempt.n, output: { done: step.id } };
      const result = run.send(event);
      run.guard(() => holds(replyOk(result), `a helpful agent's ${event.type} is refused (${replyCode(result)})`));
      continue;
    }
    const waiting = state.steps.find((s) => s.status === "waiting" && planOf(state, s.id).kind === "waitForEvent");
    const waitPlan = waiting && planOf(state, waiting.id);
    if (waiting && waitPlan?.kind === "waitForEvent") {
      const result = run.send(eventReceived(waitPlan.waitForEvent.event, { payload: { approved: true } }));
      run.guard(() => holds(replyOk(result) && (result.reply as EventReply & { ok: true }).consumed, `the event ${waiting.id} waits for is not consumed`));
      continue;
    }
    const next = nextDeadlineAt(state);
    run.guard(() => holds(next !== undefined, `${state.status} with nothing active has no deadline to wake it`));
    run.send({ type: "DeadlinesReached" }, next);
  }
  run.guard(() => holds(false, `not finished after ${budget} helpful events (status ${run.state.status})`));
  return budget;
}

const seedArb = fc.integer({ min: 0, max: 0x7fffffff });

describe("the workflow state machine under random plans and events", () => {
  it("keeps its invariants after every event, in any order and at any time", () => {
    fc.assert(
      fc.property(planShapeArb(), seedArb, commandsArb(60), (shape, seed, commands) => {
        new Playthrough(shape, seed).play(commands);
      }),
      { numRuns: NUM_RUNS.invariants },
    );
  });

  it("compensates every unfinished step that had started an attempt when the workflow unwinds", () => {
    // As fenceUnfinishedSteps says of the steps it stops: "with an attempt that had already started: their
    // remote effect may have happened, so compensation must cover them too". Only this is checked here.
    const coversStartedSteps = (before: WorkflowState, result: Result): void => {
      if (before.compensation || !result.state.compensation) return;
      for (const step of result.state.steps) {
        // A step a redrive reset and that has not started again has nothing under way in this run.
        const fenced = step.status === "cancelled" && stepIn(before, step.id)?.status !== "pending";
        const started = step.attempts.find((a) => a.kind === "action" && a.startedAt !== undefined);
        if (fenced && started && planOf(before, step.id).compensate) {
          holds(
            result.state.compensation.queue.includes(step.id),
            `step ${step.id} was stopped after attempt #${started.n} had started, but is not queued for compensation`,
          );
        }
      }
    };
    fc.assert(
      fc.property(planShapeArb(), seedArb, commandsArb(60), (shape, seed, commands) => {
        new Playthrough(shape, seed, coversStartedSteps).play(commands);
      }),
      { numRuns: NUM_RUNS.coverage },
    );
  });

  it("always finishes once its agents do their work and an operator answers what needs attention", () => {
    fc.assert(
      fc.property(
        planShapeArb(),
        seedArb,
        commandsArb(40),
        fc.constantFrom("compensate" as const, "retry" as const, "skip" as const),
        (shape, seed, commands, resolve) => {
          const run = new Playthrough(shape, seed).play(commands);
          run.trace.push("-- helpful agent from here --");
          helpfulAgent(run, resolve);
        },
      ),
      { numRuns: NUM_RUNS.liveness },
    );
  });
});
