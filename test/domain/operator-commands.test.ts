// The operator commands' table, row by row: the event each command becomes, the body its schema reads, and the
// statuses the table says allow it, checked against what the machine answers in a workflow of every status.
import { describe, expect, it } from "vitest";
import type { z } from "zod";
import { OPERATOR_COMMANDS, WORKFLOW_STATUSES, type OperatorCommandContract, type OperatorCommandName, type WorkflowStatus } from "../../src/domain/contract";
import { allowsWorkflow, COMMAND_RULES, commandEvent, type CommandRequest } from "../../src/domain/language/operator-commands";
import type { WorkflowState } from "../../src/domain/machine/state";
import {
  cancelRequested,
  claimed,
  failedPermanently,
  pauseRequested,
  plan,
  Run,
  step,
  succeeded,
  T0,
  terminateRequested,
  undoable,
  type Script,
} from "./builders";

const NAMES = Object.keys(OPERATOR_COMMANDS) as OperatorCommandName[];

const BY = { actor: "oncall" };

describe("the event each command becomes", () => {
  it.each<[string, CommandRequest, object]>([
    ["cancel", { command: "cancel", by: BY }, { type: "CancelRequested", by: BY }],
    ["compensate", { command: "compensate", by: BY }, { type: "CompensationRequested", by: BY }],
    ["retryStep", { command: "retryStep", stepId: "b", by: BY }, { type: "StepRetryRequested", stepId: "b", by: BY }],
    ["skipStep with an output", { command: "skipStep", stepId: "b", body: { output: { n: 1 } }, by: BY }, { type: "StepSkipRequested", stepId: "b", output: { n: 1 }, by: BY }],
    ["skipStep without one", { command: "skipStep", stepId: "b", body: {}, by: BY }, { type: "StepSkipRequested", stepId: "b", by: BY }],
    ["pause", { command: "pause", by: BY }, { type: "PauseRequested", by: BY }],
    ["resume", { command: "resume", by: BY }, { type: "ResumeRequested", by: BY }],
    ["terminate with a reason", { command: "terminate", by: { ...BY, reason: "not needed" } }, { type: "TerminateRequested", by: { actor: "oncall", reason: "not needed" } }],
    ["terminate without a body", { command: "terminate", by: BY }, { type: "TerminateRequested", by: BY }],
    ["redrive from a step", { command: "redrive", body: { fromStep: "a" }, by: BY }, { type: "RedriveRequested", fromStep: "a", by: BY }],
    ["redrive without a body", { command: "redrive", by: BY }, { type: "RedriveRequested", by: BY }],
    ["a reason left undefined", { command: "cancel", by: { actor: "oncall", reason: undefined } }, { type: "CancelRequested", by: BY }],
  ])("%s", (_name, request, event) => {
    expect(commandEvent(request)).toStrictEqual(event);
  });

  it("covers every command of the table", () => {
    expect(Object.keys(COMMAND_RULES)).toEqual(NAMES);
  });
});

describe.each(NAMES)("the row of %s", (name) => {
  const row: OperatorCommandContract = OPERATOR_COMMANDS[name];
  const body = COMMAND_RULES[name].body as z.ZodObject | undefined;

  it("has a body schema exactly when the contract names body fields, with the same fields", () => {
    expect(body === undefined).toBe(row.fields === undefined);
    expect(Object.keys(body?.shape ?? {})).toEqual(Object.keys(row.fields ?? {}));
    if (row.bodyRequired) expect(row.fields).toBeDefined();
  });

  it("routes a step command by its step, a workflow command by the workflow", () => {
    expect(row.path).toMatch(/^\/v1\/workflows\/\{id\}\/(steps\/\{stepId\}\/)?[a-z]+$/);
    expect(row.path.includes("{stepId}")).toBe(row.stepStatuses !== undefined);
  });
});

/** `a` (undoable) then `b`; how `b`'s failure is handled decides where the workflow goes. */
const flow = (onFailure: "compensate" | "escalate" | "fail") => plan([undoable("a", { retry: { maxAttempts: 1 } }), step("b")], { onFailure });
const B_FAILED: Script = [claimed("a"), succeeded("a"), claimed("b"), failedPermanently("b")];

/** A workflow in every status (two compensating ones: a failure's and a cancel's), from real transitions. */
const WORKFLOWS: { name: string; status: WorkflowStatus; onFailure: "compensate" | "escalate" | "fail"; script: Script; startAt?: number }[] = [
  { name: "running", status: "running", onFailure: "compensate", script: [] },
  { name: "scheduled", status: "scheduled", onFailure: "compensate", script: [], startAt: T0 + 60_000 },
  { name: "paused", status: "paused", onFailure: "compensate", script: [pauseRequested()] },
  { name: "compensating after a failure", status: "compensating", onFailure: "compensate", script: B_FAILED },
  { name: "compensating after a cancel", status: "compensating", onFailure: "compensate", script: [claimed("a"), succeeded("a"), cancelRequested()] },
  { name: "needs_attention", status: "needs_attention", onFailure: "escalate", script: B_FAILED },
  { name: "completed", status: "completed", onFailure: "compensate", script: [claimed("a"), succeeded("a"), claimed("b"), succeeded("b")] },
  { name: "failed", status: "failed", onFailure: "fail", script: B_FAILED },
  { name: "compensated", status: "compensated", onFailure: "compensate", script: [...B_FAILED, claimed("a", 2), succeeded("a", 2)] },
  { name: "cancelled", status: "cancelled", onFailure: "compensate", script: [cancelRequested()] },
  { name: "terminated", status: "terminated", onFailure: "compensate", script: [terminateRequested()] },
];

/** Each command on the failed step `b` where it takes a step, with an empty body where it takes one. */
const REQUESTS: Record<OperatorCommandName, CommandRequest> = {
  cancel: { command: "cancel", by: BY },
  compensate: { command: "compensate", by: BY },
  retryStep: { command: "retryStep", stepId: "b", by: BY },
  skipStep: { command: "skipStep", stepId: "b", body: {}, by: BY },
  pause: { command: "pause", by: BY },
  resume: { command: "resume", by: BY },
  terminate: { command: "terminate", body: {}, by: BY },
  redrive: { command: "redrive", body: {}, by: BY },
};

/** Where the view cannot tell the status apart: a second cancel of a cancel's compensation changes nothing. */
const EXCEPTIONS: Record<string, object> = { "compensating after a cancel/cancel": { ok: true } };

function expectedReply(workflow: string, name: OperatorCommandName, status: WorkflowStatus): object {
  const row: OperatorCommandContract = OPERATOR_COMMANDS[name];
  const exception = EXCEPTIONS[`${workflow}/${name}`];
  if (exception) return exception;
  if (allowsWorkflow(name, status)) return { ok: true };
  if (row.unchanged?.in.includes(status)) return { ok: true, unchanged: true };
  return { ok: false, code: "conflict" };
}

describe("the statuses the table allows, against the machine", () => {
  it("has a workflow in every status", () => {
    expect(new Set(WORKFLOWS.map((workflow) => workflow.status))).toEqual(new Set(WORKFLOW_STATUSES));
  });

  describe.each(WORKFLOWS)("a workflow $name", ({ name: workflow, status, onFailure, script, startAt }) => {
    const options = startAt === undefined ? {} : { startAt };
    const state: WorkflowState = new Run(flow(onFailure), options).play(script).state;

    it(`is ${status}`, () => {
      expect(state.status).toBe(status);
    });

    it.each(NAMES)("answers %s as the table says", (name) => {
      const run = new Run(flow(onFailure), options).play(script);
      expect(run.send(commandEvent(REQUESTS[name])).reply).toMatchObject(expectedReply(workflow, name, status));
    });
  });

  it.each(["retryStep", "skipStep"] as const)("refuses %s on a step whose status the table does not allow", (name) => {
    const run = new Run(flow("escalate")).play(B_FAILED);
    expect(run.step("a").status).toBe("succeeded");
    expect(run.send(commandEvent({ command: name, stepId: "a", body: {}, by: BY } as CommandRequest)).reply).toMatchObject({ ok: false, code: "conflict" });
  });
});

/** For each command, a workflow in which it acts (the failed step `b` for the step commands). */
const ACTS_ON: Record<OperatorCommandName, (typeof WORKFLOWS)[number]["name"]> = {
  cancel: "running",
  compensate: "needs_attention",
  retryStep: "needs_attention",
  skipStep: "needs_attention",
  pause: "running",
  resume: "paused",
  terminate: "running",
  redrive: "failed",
};

describe("who acted and why", () => {
  it.each(NAMES)("%s records the actor and the reason on the history entry of what it did", (name) => {
    const workflow = WORKFLOWS.find((candidate) => candidate.name === ACTS_ON[name])!;
    const run = new Run(flow(workflow.onFailure)).play(workflow.script);
    const by = { actor: "alice", reason: "customer asked on ticket 42" };

    const result = run.send(commandEvent({ ...REQUESTS[name], by } as CommandRequest));

    expect(result.reply).toMatchObject({ ok: true });
    const recorded = result.history.filter((entry) => entry.data?.actor !== undefined);
    expect(recorded, JSON.stringify(result.history)).toHaveLength(1);
    expect(recorded[0]?.data).toMatchObject(by);
  });

  it.each(NAMES)("%s without a reason records the actor alone", (name) => {
    const workflow = WORKFLOWS.find((candidate) => candidate.name === ACTS_ON[name])!;
    const run = new Run(flow(workflow.onFailure)).play(workflow.script);

    const result = run.send(commandEvent(REQUESTS[name]));

    const recorded = result.history.find((entry) => entry.data?.actor !== undefined);
    expect(recorded?.data).toMatchObject({ actor: "oncall" });
    expect(recorded?.data).not.toHaveProperty("reason");
  });

  it("a terminate's reason is also the workflow's error", () => {
    const run = new Run(flow("compensate"));
    run.send(commandEvent({ command: "terminate", by: { actor: "alice", reason: "duplicate order" } }));
    expect(run.state.error).toEqual({ message: "duplicate order" });
  });
});
