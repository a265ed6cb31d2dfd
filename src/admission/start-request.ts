/**
 * What a start asks the new workflow's object for, for everything that starts one: `POST /v1/workflows`, a
 * schedule's fires and a `workflow` step's child. One path, so each is resolved, checked, hashed and planned
 * exactly like a request. Expected refusals are values (a discriminated result), since objects call this with no
 * HTTP layer to turn errors into answers. It calls no workflow object itself (start-workflow.ts does), so a
 * workflow's own object can use it for its children.
 */
import { canonicalJson } from "../domain/security/canonical-json";
import { definitionHash, type StartWorkflowInput } from "../domain/language/definition";
import { planWorkflow } from "../domain/language/plan";
import type { FairShareKey } from "../domain/admission/fair-share";
import type { DefinitionInput } from "../domain/language/schemas";
import { sha256Hex } from "../domain/security/sha256";
import type { ParentRef, PinnedDefinition } from "../domain/machine/state";
import type { WorkflowView } from "../domain/machine/view";
import { mapMaxItems, startHandOff } from "../config";
import { MAX_MAP_ITEMS } from "../domain/contract";
import { backPressureNow } from "./back-pressure-now";
import { findDefinition } from "../registry/d1-registry";
import type { StartRequest } from "../workflow/rpc";
import { checkDefinitionTargets, checkNotifyTarget, type TargetRefusal } from "./definition-targets";
import { scheduledStartOf, type StartTimeIssue } from "../domain/language/start-time";

export type StartRefusal =
  | TargetRefusal
  | { ok: false; code: "conflict"; message: string }
  /** No such definition or version (a `definitionRef` that names none). */
  | { ok: false; code: "not_found"; message: string }
  /** Shepherd's task queue is too far behind: nothing was stored; try again after `retryAfterSeconds`. */
  | { ok: false; code: "overloaded"; message: string; retryAfterSeconds: number }
  /** A start time that cannot be kept (`startAt` too far ahead, or already past when the workflow would be created). */
  | { ok: false; code: "validation_failed"; message: string; details: StartTimeIssue[] };

export type StartOutcome = { ok: true; created: boolean; workflow: WorkflowView } | StartRefusal;

export interface StartOptions {
  /** The id of the schedule whose fire this is; the workflow keeps it. */
  schedule?: string;
  /**
   * Skip back-pressure: a start that no client can retry and that has already been deferred as long as it may
   * (a schedule's fire at the end of its catch-up window) is made rather than dropped.
   */
  admitted?: boolean;
  /** The step whose child this is: kept by the child, and part of the request's hash. */
  parent?: ParentRef;
}

/**
 * The start of the workflow `body` describes for `tenant`, for its object's `start`, which is idempotent by id (the
 * same id and body again answers the existing workflow, another body under that id is a `conflict`). A
 * `definitionRef` is resolved with one D1 read; the workflow keeps the plan it started with, so a version
 * published later changes nothing.
 */
export async function startRequestFor(env: Env, tenant: string, body: StartWorkflowInput, options: StartOptions = {}): Promise<{ ok: true; request: StartRequest } | StartRefusal> {
  // Without the secret no task could be signed: refuse before anything is stored.
  if (!env.TASK_TOKEN_SECRET) {
    return { ok: false, code: "not_configured", message: "TASK_TOKEN_SECRET is not set: run `wrangler secret put TASK_TOKEN_SECRET`." };
  }
  const scheduledStart = scheduledStartOf(body, Date.now());
  if (scheduledStart && "path" in scheduledStart) return { ok: false, code: "validation_failed", message: `startAt ${scheduledStart.message}`, details: [scheduledStart] };
  const resolved = await runnableDefinition(env, tenant, body);
  if (!resolved.ok) return resolved;
  const notifyRefused = body.notify && checkNotifyTarget(env, tenant, body.notify.url);
  if (notifyRefused) return notifyRefused;
  const overloaded = options.admitted ? undefined : await overloadRefusal(env, { tenant, name: resolved.definition.name });
  if (overloaded) return overloaded;
  const id = body.id ?? `wf_${crypto.randomUUID()}`;
  const { schedule, parent } = options;
  const request: StartRequest = {
    tenant,
    id,
    plan: planWorkflow(resolved.definition, mapLimitOf(env)),
    input: body.input ?? null,
    // The body as sent, reference and all: a repeated start by reference is the same request even after a newer
    // version was published (it answers the workflow the first one started, on the version it resolved). A child's
    // parent is part of it: another parent's start under the same id is a conflict, not this child.
    requestHash: await sha256Hex(canonicalJson({ ...body, id, ...(parent ? { parent: { id: parent.id, stepId: parent.stepId } } : {}) })),
    definition: resolved.pinned,
    ...(schedule === undefined ? {} : { schedule }),
    ...(parent ? { parent } : {}),
    ...(body.priority === undefined ? {} : { priority: body.priority }),
    ...(body.fairnessKey === undefined ? {} : { fairnessKey: body.fairnessKey }),
    ...(body.notify ? { notify: body.notify } : {}),
    handOff: startHandOff(env),
    ...(scheduledStart ? { scheduledStart } : {}),
  };
  return { ok: true, request };
}

type Resolved = { ok: true; definition: DefinitionInput; pinned: PinnedDefinition } | Extract<StartRefusal, { code: "not_found" }>;

/**
 * The definition a start (or every fire of a schedule) would run, resolved and checked against the tenant's
 * targets; `at` is where the workflow's fields sit in the request body (a schedule nests them under `workflow`).
 */
export async function runnableDefinition(
  env: Env,
  tenant: string,
  body: Pick<StartWorkflowInput, "definition" | "definitionRef">,
  at: string[] = [],
): Promise<Resolved | TargetRefusal> {
  const resolved = await resolveDefinition(env, tenant, body, at);
  if (!resolved.ok) return resolved;
  return checkDefinitionTargets(env, tenant, resolved.definition, [...at, body.definitionRef ? "definitionRef" : "definition"]) ?? resolved;
}

/** The definition to run: the inline one, or the referenced version (the latest when none is named). */
async function resolveDefinition(env: Env, tenant: string, body: Pick<StartWorkflowInput, "definition" | "definitionRef">, at: string[]): Promise<Resolved> {
  const ref = body.definitionRef;
  if (!ref) {
    // The schema guarantees one of the two.
    const definition = body.definition as DefinitionInput;
    return { ok: true, definition, pinned: { name: definition.name, hash: await definitionHash(definition) } };
  }
  const found = await findDefinition(env.DB, tenant, ref.name, ref.version);
  if (!found) {
    const what = ref.version === undefined ? `definition "${ref.name}"` : `version ${ref.version} of definition "${ref.name}"`;
    return { ok: false, code: "not_found", message: `No ${what} (${[...at, "definitionRef"].join(".")}); publish it with PUT /v1/definitions/${ref.name}.` };
  }
  return { ok: true, definition: found.definition, pinned: { name: found.name, version: found.version, hash: found.hash } };
}

/**
 * Back-pressure instead of collapse: while our own task queue is further behind than BACKPRESSURE_LAG_MS, a new
 * start of a tenant (and workflow name) among those filling it is refused before anything is stored; everybody
 * else's is admitted. What was accepted keeps running; a caller that waits and retries gets in once the queue has
 * caught up. Never an error inside a workflow.
 */
async function overloadRefusal(env: Env, key: FairShareKey): Promise<StartRefusal | undefined> {
  const { verdict } = await backPressureNow(env, key);
  if (!verdict.overloaded) return undefined;
  const seconds = verdict.retryAfterSeconds;
  return {
    ok: false,
    code: "overloaded",
    message: `Shepherd's task queue is ${(verdict.lagMs / 1000).toFixed(1)} s behind, mostly with tenant "${key.tenant}"'s "${key.name}" workflows; nothing was started: retry after ${seconds} seconds.`,
    retryAfterSeconds: seconds,
  };
}

/** The deployment's map item limit, when it is not the contract's default (plans carry only a setting that differs). */
function mapLimitOf(env: Env): { mapMaxItems?: number } {
  const limit = mapMaxItems(env);
  return limit === MAX_MAP_ITEMS ? {} : { mapMaxItems: limit };
}
