/**
 * A workflow started with `notify` tells that URL when it ends (completed, failed, compensated, cancelled or
 * terminated): its final view, as the effect's data, written to the outbox in the commit that ended it and posted by
 * the object's alarm (workflow/deliveries/end-notice.ts). Each end is its own notice, named by the workflow and how
 * often it was redriven: a redriven workflow that ends again sends a second notice, of its new end, and a receiver
 * drops repeats of one notice by its id. The delivery's outcome comes back as an event that only adds to the history.
 */
import { isTerminal, type WorkflowState, type WorkflowStatus } from "./state";
import { toWorkflowView } from "./view";
import type { TransitionContext } from "./context";
import type { PostEndNotice } from "./effects";

/** The notice of the end this transition reached, when the workflow has a `notify` and just ended. */
export function endNotice(previous: WorkflowState | undefined, state: WorkflowState, now: number): PostEndNotice | undefined {
  const { notify } = state;
  if (!notify || !isTerminal(state.status) || (previous && isTerminal(previous.status))) return undefined;
  return {
    type: "PostEndNotice",
    notice: {
      id: `${state.id}:end:${state.redriveCount ?? 0}`,
      url: notify.url,
      ...(notify.secret === undefined ? {} : { secret: notify.secret }),
      status: state.status,
      endedAt: state.endedAt ?? now,
      view: toWorkflowView(state),
    },
  };
}

/** What came of a notice's delivery: posted (a 2xx), or given up (refused, or every try failed). */
export type EndNoticeEvent =
  | { type: "EndNoticeDelivered"; noticeId: string; status: WorkflowStatus; attempts: number; httpStatus: number }
  | { type: "EndNoticeFailed"; noticeId: string; status: WorkflowStatus; attempts: number; error: string; httpStatus?: number };

/** Recorded, and nothing else moves: the workflow ended before, and may have been redriven since. */
export function noteEndNotice(ctx: TransitionContext, event: EndNoticeEvent): { ok: true } {
  const { noticeId, status, attempts } = event;
  if (event.type === "EndNoticeDelivered") {
    ctx.note({ type: "workflow_notified", data: { noticeId, status, attempts, httpStatus: event.httpStatus } });
  } else {
    ctx.note({ type: "workflow_notify_failed", data: { noticeId, status, attempts, error: event.error, ...(event.httpStatus === undefined ? {} : { httpStatus: event.httpStatus }) } });
  }
  return { ok: true };
}
