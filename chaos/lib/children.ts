// The soak's parent/child phase (reliability case 28; contract v1.2, "Child workflows"): parents whose step runs a
// child workflow by inline definition, started with the soak so that its remote faults, the Worker's faults
// (abortAfterChildStart among them) and its restart hit parents and children alike. Six shapes, dealt in turn: a
// child of 1–3 http steps; the same with the step's own retry, whose first child the remote declines by design so the
// retry starts `<id>:2`; a map whose item is a child (`<parentId>:kids:<index>`); and three the soak cancels while
// their child waits for an event, one per `onParentClose` (cancel, terminate, abandon).
import { familyId, familyWorkflow, remotePost, SOAK_STEP_DEFAULTS } from "./definitions.ts";
import type { Definition, OnParentClose, RetryPolicy, SoakWorkflow, StepDefinition } from "./definitions.ts";
import { seededRandom } from "./faults.ts";
import { mapItems } from "./map.ts";

export const PARENT_KIND = "parent";
export const CHILD_KIND = "child";
/** The step of a parent that runs one child. */
export const CHILD_STEP_ID = "ship";
/** The map step of a parent whose items are children. */
export const CHILDREN_MAP_STEP_ID = "kids";
/** The child's wait in the cancelled shapes: its parent is cancelled while it waits here. */
export const HOLD_STEP_ID = "hold";
/** The event that lets an abandoned child go on to its end (the soak sends it after its parent's cancel). */
export const RELEASE_EVENT = "release";

export type ParentShape = "inline" | "retried" | "map" | "cancel" | "terminate" | "abandon";
/** Dealt in turn, so that 6 parents have one of each. */
export const PARENT_SHAPES: readonly [ParentShape, ...ParentShape[]] = ["inline", "cancel", "retried", "terminate", "map", "abandon"];
/** The parents of each preset: one of each shape in CI, two in the full soak. */
export const DEFAULT_PARENTS: Readonly<Record<"soak" | "quick", number>> = { soak: 12, quick: 6 };
/** Items of a map of children: a few dozen children started 10 at a time. */
export const CHILDREN_PER_MAP = 30;
const CHILDREN_MAP_CONCURRENCY = 10;
/** The retried shape's own retry: a child that did not complete is replaced by a fresh one (contract: `<id>:<attempt>`). */
const CHILD_STEP_RETRY: RetryPolicy = { maxAttempts: 3, initialIntervalMs: 200, backoffCoefficient: 2, maxIntervalMs: 1_000, jitter: 0.2 };
/** Longer than the soak: a held child that its parent's close never reaches fails at the end, visibly. */
const HOLD_TIMEOUT_MS = 600_000;

/** What the harness predicts of one parent. */
export interface ParentPlan {
  id: string;
  shape: ParentShape;
  /** The step that starts the children: `ship`, or `kids` for a map. */
  stepId: string;
  /** Every child it must start, no more: one per (step, attempt), or per item for a map. */
  children: string[];
  /** The soak cancels it (the three cancelled shapes). */
  cancelled: boolean;
  /**
   * The soak's cancel waits for the restart to be over, so that the crash finds the parent waiting on a holding child
   * and the close reaches the child after it: terminate's in the first round of shapes, cancel's and abandon's in the
   * second, and so on in turn.
   */
  cancelAfterRestart: boolean;
  onParentClose: OnParentClose | null;
}

/** A parent and what it is predicted to do; its children as the soak's workflows (for the generic checks). */
export interface ParentFamily {
  plans: ParentPlan[];
  parents: SoakWorkflow[];
  children: SoakWorkflow[];
}

const CLOSES: Partial<Record<ParentShape, OnParentClose>> = { cancel: "cancel", terminate: "terminate", abandon: "abandon" };

export const shapeOf = (i: number): ParentShape => PARENT_SHAPES[i % PARENT_SHAPES.length] ?? "inline";

/** `chaos-<seed>-parent-NNNN`, its shape, its definition and its children, from the seed. */
export function buildParentFamily({ seed, count, remoteUrl }: { seed: string; count: number; remoteUrl: string }): ParentFamily {
  const random = seededRandom(seed, PARENT_KIND);
  const family: ParentFamily = { plans: [], parents: [], children: [] };
  for (let i = 0; i < count; i++) {
    const shape = shapeOf(i);
    const id = familyId(seed, PARENT_KIND, i);
    const childDefinition = childDefinitionOf(shape, remoteUrl, 1 + Math.floor(random() * 3));
    const plan = parentPlan(id, shape, Math.floor(i / PARENT_SHAPES.length));
    family.plans.push(plan);
    const input = shape === "map" ? { n: i + 1, items: mapItems(CHILDREN_PER_MAP) } : { n: i + 1 };
    family.parents.push({ ...familyWorkflow(PARENT_KIND, { id, input, definition: parentDefinition(shape, childDefinition) }), closedByDesign: plan.cancelled });
    family.children.push(...plan.children.map((childId) => childEntry(childId, plan, childDefinition)));
  }
  return family;
}

/** The children a parent of this shape starts (the retried one's first is declined, so its retry starts `:2`), in its round of shapes. */
export function parentPlan(id: string, shape: ParentShape, round = 0): ParentPlan {
  const stepId = shape === "map" ? CHILDREN_MAP_STEP_ID : CHILD_STEP_ID;
  const base = `${id}:${stepId}`;
  const children = shape === "map" ? Array.from({ length: CHILDREN_PER_MAP }, (_, i) => `${base}:${i}`) : shape === "retried" ? [base, `${base}:2`] : [base];
  const cancelled = shape in CLOSES;
  return { id, shape, stepId, children, cancelled, cancelAfterRestart: cancelled && (shape === "terminate") === (round % 2 === 0), onParentClose: CLOSES[shape] ?? null };
}

/** A child as one of the soak's workflows: what the generic checks predict of it (declined, cancelled by design). */
function childEntry(childId: string, plan: ParentPlan, definition: Definition): SoakWorkflow {
  const declined = isDeclinedChild(plan, childId);
  const entry = familyWorkflow(CHILD_KIND, { id: childId, input: {}, definition });
  return { ...entry, declinedStep: declined ? "s1" : null, closedByDesign: plan.onParentClose === "cancel" || plan.onParentClose === "terminate" };
}

/** The retried shape's first child: the remote declines its first step (its key is `<childId>:s1`). */
const isDeclinedChild = (plan: ParentPlan, childId: string): boolean => plan.shape === "retried" && childId === plan.children[0];

/**
 * The remote's 422 for a key of this family: always for the retried shape's first child's first step, never for any
 * other child (the family's outcomes are predicted from its shapes, not from the remote's drawn declines); null for a
 * key that is not the family's.
 */
export function familyDecline(seed: string, key: string): boolean | null {
  const prefix = `chaos-${seed}-${PARENT_KIND}-`;
  if (!key.startsWith(prefix)) return null;
  const number = Number(key.slice(prefix.length).split(":")[0]);
  return Number.isInteger(number) && shapeOf(number - 1) === "retried" && key === `${familyId(seed, PARENT_KIND, number - 1)}:${CHILD_STEP_ID}:s1`;
}

/** The parent: one `workflow` step, or a map whose item step is one. */
function parentDefinition(shape: ParentShape, child: Definition): Definition {
  const onParentClose = CLOSES[shape];
  const step: StepDefinition =
    shape === "map"
      ? { id: CHILDREN_MAP_STEP_ID, map: { items: "{{ input.items }}", maxConcurrency: CHILDREN_MAP_CONCURRENCY, toleratedFailures: 0, step: { workflow: { definition: child, input: { n: "{{ index }}", item: "{{ item }}" } } } } }
      : { id: CHILD_STEP_ID, workflow: { definition: child, input: { n: "{{ input.n }}" }, ...(onParentClose ? { onParentClose } : {}) }, ...(shape === "retried" ? { retry: CHILD_STEP_RETRY } : {}) };
  return { name: `chaos-${PARENT_KIND}`, steps: [step] };
}

/** The child: 1–3 http steps with their compensations; the cancelled shapes' waits for `release` between two. */
function childDefinitionOf(shape: ParentShape, remoteUrl: string, stepCount: number): Definition {
  const http = (stepId: string): StepDefinition => ({
    id: stepId,
    action: remotePost(`${remoteUrl}/act/${stepId}`, stepId, { n: "{{ input.n }}" }),
    compensate: remotePost(`${remoteUrl}/compensate/${stepId}`, stepId),
    timeouts: { startToCloseMs: 2_500 },
  });
  const held = shape in CLOSES;
  const steps = held
    ? [http("s1"), { id: HOLD_STEP_ID, waitForEvent: { event: RELEASE_EVENT, timeoutMs: HOLD_TIMEOUT_MS, onTimeout: "fail" as const } }, http("s2")]
    : Array.from({ length: shape === "map" ? 1 : stepCount }, (_, i) => http(`s${i + 1}`));
  return { name: `chaos-${CHILD_KIND}`, onFailure: "compensate", defaults: SOAK_STEP_DEFAULTS, steps };
}
