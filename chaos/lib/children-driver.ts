// The parent/child phase's driver: starts every parent with the soak and follows it to its end. A parent of a
// cancelled shape is cancelled as soon as its child waits for its `release` (the child's first step done), then
// followed to its end; its child too, which its parent's close ends (cancel, terminate), or which the soak
// releases once the parent has ended (abandon). Then the parent's children as `?parentId=` lists them, and a map
// parent's items, page by page.
import { mapPool, sleep } from "../../scripts/lib/async.ts";
import type { IndexRow, MapItemView, WorkflowView } from "./api-shapes.ts";
import { isTerminal } from "./client.ts";
import type { Answer, ShepherdClient } from "./client.ts";
import { CHILD_KIND, HOLD_STEP_ID, RELEASE_EVENT } from "./children.ts";
import type { ParentFamily, ParentPlan } from "./children.ts";
import type { SoakWorkflow } from "./definitions.ts";
import { followToEnd } from "./follow.ts";
import { readAllItems } from "./map-driver.ts";
import { newResult } from "./results.ts";
import type { WorkflowResult } from "./results.ts";
import { rotation } from "./rotation.ts";
import { startUntilAccepted } from "./starts.ts";

const POLL_MIN_MS = 250;
const POLL_MAX_MS = 1_000;
const HOLD_POLL_MS = 400;
const RESEND_MIN_MS = 250;
const RESEND_MAX_MS = 2_000;
/** 30 children fit in one page of 100; a parent that lists more has far too many. */
const MAX_CHILD_PAGES = 5;

/** What the driver saw of one parent. */
export interface ParentRecord {
  id: string;
  /** Every answer to the soak's cancel, in order (0: none came, so it was sent again). */
  cancelAnswers: number[];
  /** When the child was seen holding and the cancel was sent. */
  cancelSentAt: number | null;
  /** Every answer to the abandoned child's `release`. */
  releaseAnswers: number[];
  /** The children listed once the parent (and a closed child) had ended: extras join the final reading. */
  listed: IndexRow[] | null;
  /** A map parent's items, read once it ended. */
  items: MapItemView[] | null;
  itemsError: string | null;
}

export interface ChildRun {
  parentResults: WorkflowResult[];
  /** Every child predicted or listed, to be read at the end like any workflow. */
  childResults: WorkflowResult[];
  records: ParentRecord[];
}

export interface ChildPhase {
  done: Promise<ChildRun>;
  openSample: (n: number) => string[];
}

export interface ParentDrive {
  client: ShepherdClient;
  family: ParentFamily;
  deadline: number;
  /** Whether the soak's restart is over (true at once without one). */
  restartOver: () => boolean;
}

/** Starts every parent now and drives each to its end, or to `deadline`. */
export function driveParents({ client, family, deadline, restartOver }: ParentDrive): ChildPhase {
  const open = new Set<string>();
  const runs = family.plans.map(async (plan, i) => {
    const wf = family.parents[i];
    if (!wf) throw new Error(`no workflow for parent ${plan.id}`);
    open.add(plan.id);
    const ran = await driveParent(client, plan, wf, { deadline, restartOver });
    open.delete(plan.id);
    return ran;
  });
  const done = Promise.all(runs).then(async (ran) => {
    const records = ran.map((r) => r.record);
    return { parentResults: ran.map((r) => r.result), childResults: await childResultsOf(client, family, records, ran.flatMap((r) => r.followed)), records };
  });
  const sample = rotation();
  return { done, openSample: (n) => sample([...open], n) };
}

async function driveParent(client: ShepherdClient, plan: ParentPlan, wf: SoakWorkflow, { deadline, restartOver }: Pick<ParentDrive, "deadline" | "restartOver">): Promise<{ result: WorkflowResult; record: ParentRecord; followed: WorkflowResult[] }> {
  const result = newResult(wf.id, wf.kind);
  const record: ParentRecord = { id: plan.id, cancelAnswers: [], cancelSentAt: null, releaseAnswers: [], listed: null, items: null, itemsError: null };
  result.started = await startUntilAccepted(client, wf.payload, result, { deadline });
  if (!result.started) return { result, record, followed: [] };
  const childId = plan.children[0] ?? "";
  if (plan.cancelled && (await waitUntilHolding(client, plan.id, childId, deadline))) {
    while (plan.cancelAfterRestart && !restartOver() && Date.now() < deadline) await sleep(HOLD_POLL_MS);
    record.cancelSentAt = Date.now();
    record.cancelAnswers = await sendUntilAnswered(() => client.cancelWorkflow(plan.id, "chaos: cancelled while its child runs"), deadline);
  }
  await followToEnd(client, result, deadline, { minMs: POLL_MIN_MS, maxMs: POLL_MAX_MS });
  const followed: WorkflowResult[] = [];
  if (plan.cancelled) {
    // Released only now, with the parent ended: the abandoned child cannot end while its parent still waits on it.
    if (plan.onParentClose === "abandon") record.releaseAnswers = await sendUntilAnswered(() => client.sendEvent(childId, { event: RELEASE_EVENT, id: `${RELEASE_EVENT}-1`, payload: { by: "chaos" } }), deadline);
    const child = { ...newResult(childId, CHILD_KIND), started: true };
    await followToEnd(client, child, deadline, { minMs: POLL_MIN_MS, maxMs: POLL_MAX_MS });
    followed.push(child);
  }
  record.listed = (await listChildren(client, plan.id)).rows;
  if (plan.shape === "map") Object.assign(record, await readAllItems(client, plan.id, plan.stepId));
  return { result, record, followed };
}

/** Polls the child until it waits for its release; false when it or its parent ended first (a failed first step), or the deadline passed. */
async function waitUntilHolding(client: ShepherdClient, parentId: string, childId: string, deadline: number): Promise<boolean> {
  while (Date.now() < deadline) {
    const view = (await client.getWorkflow(childId)).value;
    if (view && isHolding(view)) return true;
    if (isTerminal(view?.status) || isTerminal((await client.getWorkflow(parentId)).value?.status)) return false;
    await sleep(HOLD_POLL_MS);
  }
  return false;
}

export const isHolding = (view: WorkflowView): boolean => view.steps.some((step) => step.id === HOLD_STEP_ID && step.status === "waiting");

/** Sends until an answer comes that is not "no answer", 429 or 5xx; every status in order. */
async function sendUntilAnswered(send: () => Promise<Answer>, deadline: number): Promise<number[]> {
  const statuses: number[] = [];
  let wait = RESEND_MIN_MS;
  while (Date.now() < deadline) {
    const { status } = await send();
    statuses.push(status);
    if (status !== 0 && status !== 429 && status < 500) return statuses;
    await sleep(wait);
    wait = Math.min(RESEND_MAX_MS, wait * 2);
  }
  return statuses;
}

/** The parent's children as `GET /v1/workflows?parentId=` lists them, every page. */
export async function listChildren(client: ShepherdClient, parentId: string): Promise<{ rows: IndexRow[] | null; error: string | null }> {
  const rows: IndexRow[] = [];
  let cursor: string | null | undefined;
  for (let page = 0; page < MAX_CHILD_PAGES; page++) {
    const answer = await client.listWorkflows(cursor, { parentId });
    if (!answer.value) return { rows: null, error: `page ${page + 1} answered ${answer.status}` };
    rows.push(...answer.value.workflows);
    cursor = answer.value.nextCursor;
    if (!cursor) return { rows, error: null };
  }
  return { rows: null, error: `more than ${MAX_CHILD_PAGES} pages` };
}

/**
 * Every child listed, and every one predicted that exists (a parent that failed early never started its later
 * children: the checks say so, the final reading must not read them), as workflows to read at the end.
 */
async function childResultsOf(client: ShepherdClient, family: ParentFamily, records: readonly ParentRecord[], followed: readonly WorkflowResult[]): Promise<WorkflowResult[]> {
  const listed = new Set(records.flatMap((r) => r.listed?.map((row) => row.id) ?? []));
  const unlisted = family.children.map((c) => c.id).filter((id) => !listed.has(id));
  const exist = await mapPool(unlisted, 5, async (id: string) => ((await client.getWorkflow(id)).status === 404 ? null : id));
  const ids = [...listed, ...exist.filter((id) => id !== null)];
  return ids.map((id) => followed.find((r) => r.id === id) ?? { ...newResult(id, CHILD_KIND), started: true });
}
