// The soak's arrivals phase (contract v1.2, "Starting from anywhere, and getting the result back"; reliability case
// 32): workflows that arrive by the three doors other than a plain start, each carrying a `notify` to the remote and
// some of them waited for by a long poll of their result, all under the soak's faults and across its restart:
//   - delayed: started with `startDelayMs`, a third with the soak (due before the restart, mostly), the rest just
//     before the kill, due in the outage or after it;
//   - batched: a few `POST /v1/workflows/batch`, the first with one bad item in its middle, the second sent twice
//     (its first send just before the kill, its repeat once Shepherd is back);
//   - queued: start messages put on the STARTS queue through the dev route `POST /dev/starts`, each sent twice, half
//     with the soak and half across the restart (the first copy before the kill, the second once it is back).
// Which workflows, with what timing, is decided here from the seed; arrivals-driver.ts sends them.
import { createHash } from "node:crypto";
import { familyId, familyWorkflow, remotePost, SOAK_RETRY, SOAK_STEP_DEFAULTS } from "./definitions.ts";
import type { Notify, SoakWorkflow, StartPayload, StepDefinition } from "./definitions.ts";
import { NOTICE_PATH } from "./notices.ts";

export const DELAYED_KIND = "delayed";
export const BATCHED_KIND = "batched";
export const QUEUED_KIND = "queued";
export const ARRIVAL_KINDS = [DELAYED_KIND, BATCHED_KIND, QUEUED_KIND] as const;
/** Workflows per door, by preset. */
export const DEFAULT_ARRIVALS: Readonly<Record<"soak" | "quick", number>> = { soak: 40, quick: 6 };
/** The soak's tenant, as its token names it in API_TOKENS (lib/shepherd.ts): a start message names it. */
export const ARRIVALS_TENANT = "chaos";
/** Every long poll asks for this long: the restart cuts some of them. */
export const RESULT_WAIT_MS = 20_000;
/** A batch holds at most this many of the phase's workflows. */
const BATCH_MAX = 15;
const STEPS = ["a1", "a2"] as const;
/**
 * A hung attempt is given up and retried after this (the remote hangs only a key's first two attempts). The phase's
 * workflows run while the burst drains, when an instant answer takes two seconds on two cores: at 2.5 s and five
 * attempts, a few used every attempt on timeouts the load made and failed, which is a timeout too tight, not a fault.
 */
const STEP_START_TO_CLOSE_MS = 4_000;
/** Two hangs and five more tries. */
const STEP_RETRY = { ...SOAK_RETRY, maxAttempts: 7 };

/** Delays of the starts made with the soak: due within its first seconds, before the restart in most runs. */
const LEAD_DELAYS_MS: readonly [number, number] = [1_000, 15_000];
/** Delays of the starts made just before the kill: the hooks return within ~2 s, the outage lasts 2–5 s. */
const OUTAGE_DELAYS_MS: readonly [number, number] = [2_500, 4_500];
/** And of those meant to fall due once Shepherd is back. */
const AFTER_DELAYS_MS: readonly [number, number] = [8_000, 20_000];

/** When the driver sends something: with the soak, or just before the restart's kill (at once without one). */
export type ArrivalWave = "lead" | "kill";

export interface DelayedStart {
  workflow: SoakWorkflow;
  delayMs: number;
  wave: ArrivalWave;
}

/** One item of a batch: one of the phase's workflows, or the deliberately bad body. */
export type BatchItem = { workflow: SoakWorkflow } | { bad: { id: string; body: unknown } };

export interface BatchPlan {
  index: number;
  items: BatchItem[];
  wave: ArrivalWave;
  /** Sent a second time once the first send was answered and the restart is over: every item answers as before (200). */
  repeated: boolean;
}

export interface QueuedStart {
  workflow: SoakWorkflow;
  /** The first copy's wave; the second copy follows it (for the kill's wave, once Shepherd is back). */
  wave: ArrivalWave;
}

export interface ArrivalsPlan {
  /** The signing secret of every notice of the phase, which the remote verifies with. */
  secret: string;
  delayed: DelayedStart[];
  batches: BatchPlan[];
  queued: QueuedStart[];
  /** Ids whose result a client waits for with `GET …/result?waitMs=` instead of reading the workflow. */
  longPolled: ReadonlySet<string>;
  /** Every workflow of the phase (not the bad item, which must never become one). */
  workflows: SoakWorkflow[];
}

/** The phase's signing secret: `whsec_` and 24 bytes derived from the seed, as the Standard Webhooks spec has them. */
export function arrivalsSecret(seed: string): string {
  return `whsec_${createHash("sha256").update(`chaos-arrivals:${seed}`).digest().subarray(0, 24).toString("base64")}`;
}

/** Whether an Idempotency-Key is one of the phase's: the remote never declines them, so each must complete. */
export const isArrivalKey = (seed: string, key: string): boolean => ARRIVAL_KINDS.some((kind) => key.startsWith(`chaos-${seed}-${kind}-`));

/** `count` workflows through each of the three doors. */
export function buildArrivals({ seed, count, remoteUrl }: { seed: string; count: number; remoteUrl: string }): ArrivalsPlan {
  const secret = arrivalsSecret(seed);
  const notify: Notify = { url: `${remoteUrl}${NOTICE_PATH}`, secret };
  const make = (kind: string) => Array.from({ length: count }, (_, i) => familyWorkflow(kind, arrivalPayload(familyId(seed, kind, i), i, kind, remoteUrl, notify)));
  const delayed = planDelayed(make(DELAYED_KIND));
  const batched = make(BATCHED_KIND);
  const queued = make(QUEUED_KIND).map((workflow, i) => ({ workflow, wave: waveOf(i, count) }));
  const longPolled = new Set([...delayed.filter((_, i) => i % 2 === 0).map((d) => d.workflow.id), ...[...batched, ...queued.map((q) => q.workflow)].filter((_, i) => i % 4 === 0).map((wf) => wf.id)]);
  const workflows = [...delayed.map((d) => d.workflow), ...batched, ...queued.map((q) => q.workflow)];
  return { secret, delayed, batches: planBatches(seed, batched, remoteUrl), queued, longPolled, workflows };
}

/** Two action steps on the remote; the body is the contract's start body with the phase's `notify`. */
function arrivalPayload(id: string, n: number, kind: string, remoteUrl: string, notify: Notify): StartPayload {
  const step = (stepId: string): StepDefinition => ({ id: stepId, action: remotePost(`${remoteUrl}/act/${stepId}`, stepId, { n: "{{ input.n }}" }), timeouts: { startToCloseMs: STEP_START_TO_CLOSE_MS }, retry: STEP_RETRY });
  return { id, input: { n }, definition: { name: `chaos-${kind}`, defaults: SOAK_STEP_DEFAULTS, steps: STEPS.map(step) }, notify };
}

/** The first ~third with the soak, the rest at the kill; the kill's first half due in the outage, the second after. */
function planDelayed(workflows: SoakWorkflow[]): DelayedStart[] {
  const lead = Math.ceil(workflows.length / 3);
  const outage = Math.ceil((workflows.length - lead) / 2);
  return workflows.map((workflow, i) => {
    const [wave, delayMs]: [ArrivalWave, number] =
      i < lead ? ["lead", spread(LEAD_DELAYS_MS, i, lead)] : i < lead + outage ? ["kill", spread(OUTAGE_DELAYS_MS, i - lead, outage)] : ["kill", spread(AFTER_DELAYS_MS, i - lead - outage, workflows.length - lead - outage)];
    return { workflow: { ...workflow, payload: { ...workflow.payload, startDelayMs: delayMs } }, wave, delayMs };
  });
}

/** The i-th of n points evenly over [from, to]. */
const spread = ([from, to]: readonly [number, number], i: number, n: number): number => Math.round(n <= 1 ? from : from + ((to - from) * i) / (n - 1));

/** The first half with the soak, the second at the kill. */
const waveOf = (i: number, count: number): ArrivalWave => (i < Math.ceil(count / 2) ? "lead" : "kill");

/**
 * At least two batches of at most BATCH_MAX: the first (with the soak) has the bad item in its middle; the second is
 * sent at the kill and again once Shepherd is back; any others go with the soak.
 */
function planBatches(seed: string, workflows: SoakWorkflow[], remoteUrl: string): BatchPlan[] {
  if (workflows.length === 0) return [];
  const count = Math.max(2, Math.ceil(workflows.length / BATCH_MAX));
  const size = Math.ceil(workflows.length / count);
  const batches: BatchPlan[] = [];
  for (let index = 0; index * size < workflows.length; index++) {
    const items: BatchItem[] = workflows.slice(index * size, (index + 1) * size).map((workflow) => ({ workflow }));
    if (index === 0) items.splice(Math.floor(items.length / 2), 0, { bad: badItem(seed, remoteUrl) });
    batches.push({ index, items, wave: index === 1 ? "kill" : "lead", repeated: index === 1 });
  }
  return batches;
}

/** A start body the front door refuses (400: a definition with no step), under an id that must never exist. */
function badItem(seed: string, remoteUrl: string): { id: string; body: unknown } {
  const id = `chaos-${seed}-${BATCHED_KIND}-bad`;
  return { id, body: { id, input: {}, definition: { name: `chaos-${BATCHED_KIND}`, steps: [] }, notify: { url: `${remoteUrl}${NOTICE_PATH}` } } };
}

/** The body an item sends. */
export const itemBody = (item: BatchItem): unknown => ("workflow" in item ? item.workflow.payload : item.bad.body);
/** The id an item names. */
export const itemId = (item: BatchItem): string => ("workflow" in item ? item.workflow.id : item.bad.id);

/** The STARTS queue's message for one start. */
export const startMessage = (wf: SoakWorkflow): { tenant: string; start: StartPayload } => ({ tenant: ARRIVALS_TENANT, start: wf.payload });
