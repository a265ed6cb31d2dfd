/**
 * The agents' side of the circuit breakers. Each isolate keeps what it knows of breakers that are open, half-open
 * or counting failures; a host it knows nothing bad of is called straight away, with no RPC, so a healthy host
 * costs nothing. Only a transient failure is reported to the host's breaker, and a success only while this
 * isolate knows of trouble there: a flaky host costs about two small RPCs per failure.
 */
import { breakerFor, type BreakerCall, type BreakerNotice, type BreakerReply, type BreakerRpc } from "../breakers/breaker-rpc";
import type { ClaimedTask } from "../domain/machine";
import { DEFAULT_BREAKER } from "../domain/breaker/settings";
import type { AttemptReport } from "../domain/machine/task-message";

/** `<tenant>|<host>` → the breaker's latest answer. No entry: closed with no failures, as far as this isolate knows. */
const known = new Map<string, BreakerReply>();

const keyOf = (tenant: string, host: string) => `${tenant}|${host}`;

function remember(tenant: string, host: string, reply: BreakerReply): void {
  const key = keyOf(tenant, host);
  if (reply.state === "closed" && reply.failures === 0) known.delete(key);
  else known.set(key, { state: reply.state, failures: reply.failures, ...(reply.openUntil === undefined ? {} : { openUntil: reply.openUntil }) });
}

/** What this isolate knows of a host's breaker; undefined: nothing bad. */
export function knownBreaker(tenant: string, host: string): BreakerReply | undefined {
  return known.get(keyOf(tenant, host));
}

/** A breaker opened or closed (it tells every agent host, so isolates that never called the host learn it too). */
export function learnBreaker(notice: BreakerNotice): void {
  remember(notice.tenant, notice.host, notice);
}

/**
 * Performs an attempt under its host's breaker: parked (no request) while the breaker is open, otherwise `perform`;
 * then the outcome goes to the breaker when it counts. The breaker is advice: if it cannot be reached, the attempt
 * runs and reports as it would without one.
 */
export async function guardedByBreaker(env: Env, tenant: string, task: ClaimedTask, signal: AbortSignal, perform: () => Promise<AttemptReport>): Promise<AttemptReport> {
  const { host } = task;
  if (host === undefined) return perform();
  const call: BreakerCall = { tenant, host, settings: task.breaker ?? DEFAULT_BREAKER, workflowId: task.workflowId, stepId: task.stepId, attempt: task.attempt };
  // A step its breaker released asks even when this isolate knows nothing (it may have been restarted since).
  const troubled = task.afterParking === true || (known.get(keyOf(tenant, host))?.state ?? "closed") !== "closed";
  if (troubled) {
    const parked = await askToBeAdmitted(env, call);
    if (parked) return parked;
  }
  const report = await perform();
  if (isTransientFailure(report, task, signal)) return withFailureReported(env, call, report);
  // The report does not wait for the breaker: it is advice, and one object per host that every agent tells of its
  // successes queues up under load (the soak saw reports land 2 s after the remote's answer, past startToCloseMs).
  // A success after a parking (the breaker's probe) is awaited: the breaker closes on it and releases parked steps.
  if (hostAnswered(report) && (troubled || known.has(keyOf(tenant, host)))) {
    const told = tellBreaker(call, "recordSuccess", (breaker) => breaker.recordSuccess(call), env);
    if (troubled) await told;
  }
  return report;
}

async function askToBeAdmitted(env: Env, call: BreakerCall): Promise<AttemptReport | undefined> {
  try {
    const reply = await breakerFor(env, call.tenant, call.host).admit(call);
    remember(call.tenant, call.host, reply);
    return reply.admitted ? undefined : { type: "parked", host: call.host, openUntil: reply.openUntil ?? Date.now() };
  } catch (error) {
    console.error(JSON.stringify({ message: "could not ask the breaker; calling the host", host: call.host, error: String(error) }));
    return undefined;
  }
}

async function withFailureReported(env: Env, call: BreakerCall, report: AttemptReport & { type: "failed" }): Promise<AttemptReport> {
  const reply = await tellBreaker(call, "recordFailure", (breaker) => breaker.recordFailure(call), env);
  if (!reply?.openedNow || reply.openUntil === undefined) return report;
  return { ...report, circuitOpened: { host: call.host, failures: reply.failures, openUntil: reply.openUntil } };
}

async function tellBreaker<R extends BreakerReply>(call: BreakerCall, method: string, send: (breaker: BreakerRpc) => Promise<R>, env: Env): Promise<R | undefined> {
  try {
    const reply = await send(breakerFor(env, call.tenant, call.host));
    remember(call.tenant, call.host, reply);
    return reply;
  } catch (error) {
    console.error(JSON.stringify({ message: "could not report to the breaker", host: call.host, method, error: String(error) }));
    return undefined;
  }
}

/** Statuses that say "not now" (408, 429, 5xx): the host, not the request, is in trouble. */
const TRANSIENT_STATUS = (status: number) => status === 408 || status === 429 || status >= 500;

/**
 * What counts against a host: an answer that says "not now", no answer at all (a network error), or no answer
 * before the attempt's deadline. Not a request refused before it left, nor one aborted because the attempt was
 * cancelled: neither says anything about the host.
 */
function isTransientFailure(report: AttemptReport, task: ClaimedTask, signal: AbortSignal): report is AttemptReport & { type: "failed" } {
  if (report.type !== "failed" || !report.error.retryable) return false;
  if (report.error.status !== undefined) return TRANSIENT_STATUS(report.error.status);
  return !signal.aborted || Date.now() >= task.deadlineAt;
}

/** Any HTTP answer that was not a "not now" means the host is up, whatever it thought of the request. */
function hostAnswered(report: AttemptReport): boolean {
  return report.type !== "failed" || report.error.status !== undefined;
}
