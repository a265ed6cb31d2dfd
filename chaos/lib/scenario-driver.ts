// The driver of the supervision scenarios' small families (stalls, lost answers, the breaker's batch): each
// workflow is started at its own time (the seed's, or the outage's) and read until it ends. Few workflows, so
// each is polled on its own, like the regular workload's, but backing off to every 3 s: most of them wait a
// while (a stall, a parked step), and the harness's reads must not be what loads the engine.
import { sleep } from "../../scripts/lib/async.ts";
import { TERMINAL_STATUSES } from "./client.ts";
import { startUntilAccepted } from "./starts.ts";

const POLL_MIN_MS = 250;
const POLL_MAX_MS = 3_000;

/**
 * Starts every workflow at `startAt(wf)` (epoch ms; all at once when they agree) and follows each to a terminal
 * status or `deadline`. Resolves to one result per workflow, in the shape run.ts reads for every family.
 */
export function driveFamily({ client, workflows, startAt, deadline, onStarted, onEnded }) {
  return Promise.all(
    workflows.map(async (wf) => {
      const result = { id: wf.id, kind: wf.kind, started: false, startTries: 0, startStatuses: {}, terminal: false, status: null, polls: 0, pollErrors: 0, observedEndAt: null };
      await sleep(Math.max(0, Math.min(startAt(wf), deadline) - Date.now()));
      result.started = await startUntilAccepted(client, wf.payload, result, { deadline });
      if (!result.started) return result;
      onStarted?.(wf.id);
      await follow(client, result, deadline);
      onEnded?.(wf.id);
      return result;
    }),
  );
}

async function follow(client, result, deadline) {
  let wait = POLL_MIN_MS;
  while (Date.now() < deadline) {
    await sleep(Math.min(wait, Math.max(0, deadline - Date.now())));
    const res = await client.getWorkflow(result.id);
    result.polls += 1;
    if (res.status !== 200) result.pollErrors += 1;
    else {
      result.status = res.body.status;
      if (TERMINAL_STATUSES.has(res.body.status)) {
        result.terminal = true;
        result.observedEndAt = Date.now();
        return;
      }
    }
    wait = Math.min(POLL_MAX_MS, Math.ceil(wait * 1.5));
  }
}
