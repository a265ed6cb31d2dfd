// The end's notice to a start's `notify` URL, as the pure machine decides it: one PostEndNotice in the commit that
// ends the workflow, however it ends, carrying the final view and never showing the secret.
import { describe, expect, it } from "vitest";
import { commitPlan, transition, type EndNoticeEvent, type WorkflowEvent } from "../../src/domain/machine";
import type { PostEndNotice } from "../../src/domain/machine/effects";
import { toWorkflowView } from "../../src/domain/machine/view";
import type { WorkflowStatus } from "../../src/domain/machine/state";
import type { WorkflowPlan } from "../../src/domain/language/plan";
import {
  cancelRequested,
  claimed,
  eventReceived,
  failedPermanently,
  fixedRandom,
  plan,
  redriveRequested,
  Run,
  step,
  succeeded,
  T0,
  terminateRequested,
  undoable,
  wait,
  waitStep,
  type Script,
} from "./builders";

const SECRET = `whsec_${btoa("twenty-four bytes of key")}`;
const NOTIFY = { url: "https://hooks.example/orders", secret: SECRET };

/** The end notices of one transition, as the commit would write them to the outbox. */
function noticesOf(run: Run, event: WorkflowEvent): PostEndNotice[] {
  const before = run.state;
  const result = run.send(event);
  return commitPlan(before, result, run.now).effects.filter((effect): effect is PostEndNotice => effect.type === "PostEndNotice");
}

const oneStep = plan([step("a")]);
const awaitsApproval = plan([waitStep("approval", { event: "approved", timeoutMs: 60_000 })]);

interface EndCase {
  name: string;
  plan: WorkflowPlan;
  given: Script;
  /** The event that ends the workflow. */
  ends: WorkflowEvent;
  status: WorkflowStatus;
}

const ENDS: EndCase[] = [
  { name: "completes", plan: oneStep, given: [claimed("a")], ends: succeeded("a", 1, { shipped: true }), status: "completed" },
  { name: "fails", plan: plan([step("a")], { onFailure: "fail" }), given: [claimed("a")], ends: failedPermanently("a"), status: "failed" },
  {
    name: "is compensated",
    plan: plan([undoable("a"), step("b")]),
    given: [claimed("a"), succeeded("a"), claimed("b"), failedPermanently("b"), claimed("a", 2)],
    ends: succeeded("a", 2),
    status: "compensated",
  },
  { name: "is cancelled", plan: awaitsApproval, given: [], ends: cancelRequested(), status: "cancelled" },
  { name: "is terminated", plan: oneStep, given: [claimed("a")], ends: terminateRequested("no longer needed"), status: "terminated" },
];

describe("the end's notice", () => {
  it.each(ENDS)("is written once, with the final view, in the commit where the workflow $name", ({ plan: workflowPlan, given, ends, status }) => {
    const run = new Run(workflowPlan, { id: "order-1", notify: NOTIFY }).play([...given, wait(10)]);

    const notices = noticesOf(run, ends);

    expect(run.state.status).toBe(status);
    expect(notices).toEqual([
      {
        type: "PostEndNotice",
        notice: { id: "order-1:end:0", url: NOTIFY.url, secret: SECRET, status, endedAt: run.state.endedAt, view: toWorkflowView(run.state) },
      },
    ]);
    expect(run.state.endedAt).toBeGreaterThanOrEqual(T0 + 10);
  });

  it("is not written for a workflow started without notify", () => {
    const run = new Run(oneStep).play([claimed("a")]);

    expect(noticesOf(run, succeeded("a"))).toEqual([]);
    expect(run.state.status).toBe("completed");
  });

  it("is not written again by what happens after the end (a late report, the alarm's tick)", () => {
    const run = new Run(oneStep, { notify: NOTIFY }).play([claimed("a"), succeeded("a")]);

    expect(noticesOf(run, succeeded("a"))).toEqual([]);
    expect(noticesOf(run, { type: "DeadlinesReached" })).toEqual([]);
  });

  it("is not written by a commit that leaves the workflow open", () => {
    const run = new Run(plan([step("a"), step("b")]), { notify: NOTIFY }).play([claimed("a")]);

    expect(noticesOf(run, succeeded("a"))).toEqual([]);
    expect(run.state.status).toBe("running");
  });

  it("of a redriven workflow that ends again is a second notice, of its new end, under a new id", () => {
    const run = new Run(awaitsApproval, { id: "order-2", notify: NOTIFY });
    const first = noticesOf(run, terminateRequested());
    run.send(redriveRequested());

    const second = noticesOf(run, eventReceived("approved"));

    expect(first.map(({ notice }) => [notice.id, notice.status])).toEqual([["order-2:end:0", "terminated"]]);
    expect(second.map(({ notice }) => [notice.id, notice.status, notice.view.redriveCount])).toEqual([["order-2:end:1", "completed", 1]]);
  });

  it("shows the notify URL in the view, and whether it is signed, never the secret", () => {
    const run = new Run(oneStep, { notify: NOTIFY }).play([claimed("a")]);
    const [ended] = noticesOf(run, succeeded("a"));

    expect(ended?.notice.view.notify).toEqual({ url: NOTIFY.url, signed: true });
    expect(JSON.stringify(ended?.notice.view)).not.toContain(SECRET);
    expect(toWorkflowView(new Run(oneStep, { notify: { url: NOTIFY.url } }).state).notify).toEqual({ url: NOTIFY.url, signed: false });
  });
});

describe("what came of the notice", () => {
  const outcomes: [string, EndNoticeEvent, string, Record<string, unknown>][] = [
    [
      "a delivery",
      { type: "EndNoticeDelivered", noticeId: "wf:end:0", status: "completed", attempts: 2, httpStatus: 204 },
      "workflow_notified",
      { noticeId: "wf:end:0", status: "completed", attempts: 2, httpStatus: 204 },
    ],
    [
      "a notice given up",
      { type: "EndNoticeFailed", noticeId: "wf:end:0", status: "completed", attempts: 12, error: "receiver answered 503", httpStatus: 503 },
      "workflow_notify_failed",
      { noticeId: "wf:end:0", status: "completed", attempts: 12, error: "receiver answered 503", httpStatus: 503 },
    ],
  ];

  it.each(outcomes)("is recorded in the history for %s, and changes nothing else", (_name, event, type, data) => {
    const run = new Run(oneStep, { notify: NOTIFY }).play([claimed("a"), succeeded("a"), wait(50)]);
    const before = run.state;

    const result = transition(before, event, run.now, fixedRandom, run.rows);

    expect(result.changed).toBe(false);
    expect(result.state).toEqual(before);
    expect(result.history).toEqual([{ type, data }]);
    expect(result.reply).toEqual({ ok: true });
    expect(commitPlan(before, result, run.now).effects.map((effect) => effect.type)).toEqual(["AnnounceHistory"]);
  });
});
