// Following one workflow to its end by reading it, backing off from `minMs` to `maxMs` between readings: the
// regular workload's and the supervision scenarios' drivers (the burst reads the index instead).
import { sleep } from "../../scripts/lib/async.ts";
import { TERMINAL_STATUSES } from "./client.ts";
import type { ShepherdClient, TypedAnswer } from "./client.ts";
import type { WorkflowView } from "./api-shapes.ts";
import type { WorkflowResult } from "./results.ts";

/** What a reading asks of the follower: "poll soon" reads again after `minMs`. */
export type ViewHandler = (view: WorkflowView) => Promise<"poll soon" | undefined> | "poll soon" | undefined;

export interface FollowOptions {
  minMs: number;
  maxMs: number;
  /** Sees every reading before the follower looks at its status: an ended workflow has nothing to wait for. */
  onView?: ViewHandler;
  /** Sees every answer, whatever it is (its size, a failed reading). */
  onAnswer?: (answer: TypedAnswer<WorkflowView>) => void;
  /** Stops following before the deadline once this says so (a workflow that stopped moving after the rest ended). */
  giveUp?: () => boolean;
}

/** Reads the workflow until it is terminal or `deadline` passes, keeping the account on `result`. */
export async function followToEnd(client: ShepherdClient, result: WorkflowResult, deadline: number, { minMs, maxMs, onView, onAnswer, giveUp }: FollowOptions): Promise<void> {
  let wait = minMs;
  while (Date.now() < deadline && !giveUp?.()) {
    await sleep(Math.min(wait, Math.max(0, deadline - Date.now())));
    const answer = await client.getWorkflow(result.id);
    const view = answer.value;
    onAnswer?.(answer);
    result.polls += 1;
    if (view) {
      result.status = view.status;
      if (onView && (await onView(view)) === "poll soon") wait = minMs;
      if (TERMINAL_STATUSES.has(view.status)) {
        result.terminal = true;
        result.observedEndAt = Date.now();
        return;
      }
    } else {
      result.pollErrors += 1;
    }
    wait = Math.min(maxMs, Math.ceil(wait * 1.5));
  }
}
