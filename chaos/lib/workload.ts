// The soak's regular workload: the workflows it starts, built from the seed (workload-driver.ts starts and
// follows them).
import { isDeclined, seededRandom } from "./faults.ts";
import type { RemoteFaults } from "./faults.ts";
import { remotePost, SOAK_STEP_DEFAULTS } from "./definitions.ts";
import type { SoakWorkflow, StepDefinition } from "./definitions.ts";
import { languagePlans, languageSteps } from "./language.ts";
import type { LanguagePlan } from "./language.ts";

export interface WorkloadSpec {
  seed: string;
  count: number;
  remoteUrl: string;
  remoteFaults: Readonly<RemoteFaults>;
  /** The family: "soak" unless told. */
  kind?: string;
  minSteps?: number;
  maxSteps?: number;
  /** The share of the workflows with a sleep and a wait for an event (none unless told). */
  languageShare?: number;
}

/**
 * Builds `count` workflows of `minSteps`–`maxSteps` sequential steps (3–5 unless told), each step with a
 * compensation. Also predicts, from the remote's fault plan, which ones the remote will decline (422) and so
 * must end `compensated`. `kind` names the family: it is the definition's name (so the index can be listed
 * by family), part of the ids, and the salt of the family's own random choices, so adding a family never
 * changes another's workflows. `languageShare` of them (the regular soak's: a quarter) also get a sleep and
 * a wait for an event after their first action (lib/language.ts); their own choices have their own salt,
 * so the action steps, timeouts and declines are the same as without them.
 */
export function buildWorkflows({ seed, count, remoteUrl, remoteFaults, kind = "soak", minSteps = 3, maxSteps = 5, languageShare = 0 }: WorkloadSpec): SoakWorkflow[] {
  const random = seededRandom(seed, kind === "soak" ? "workload" : kind);
  const prefix = kind === "soak" ? `chaos-${seed}` : `chaos-${seed}-${kind}`;
  const width = Math.max(4, String(count).length);
  const ids = Array.from({ length: count }, (_, i) => `${prefix}-${String(i + 1).padStart(width, "0")}`);
  const plans = languageShare > 0 ? languagePlans(seed, ids, languageShare) : new Map<string, LanguagePlan>();
  return ids.map((id, i) => {
    const steps = actionSteps(remoteUrl, minSteps + Math.floor(random() * (maxSteps - minSteps + 1)), random);
    const declinedStep = steps.find((step) => isDeclined(seed, `${id}:${step.id}`, remoteFaults))?.id ?? null;
    const language = plans.get(id) ?? null;
    // The sleep and the wait come after the first action: it gives an early event time to arrive first.
    if (language && steps[0]) steps.splice(1, 0, ...languageSteps(language, steps[0].id));
    return {
      id,
      kind,
      declinedStep,
      // Whether the remote declines an action before the wait: then the wait is never reached.
      declinedBeforeWait: language !== null && declinedStep === steps[0]?.id,
      language,
      payload: { id, input: { n: i + 1 }, definition: { name: `chaos-${kind}`, onFailure: "compensate", defaults: SOAK_STEP_DEFAULTS, steps } },
    };
  });
}

/** `count` action steps s1, s2, … against the remote, each with its compensation and a timeout of 2–3 s. */
function actionSteps(remoteUrl: string, count: number, random: () => number): StepDefinition[] {
  return Array.from({ length: count }, (_, i) => {
    const stepId = `s${i + 1}`;
    return {
      id: stepId,
      action: remotePost(`${remoteUrl}/act/${stepId}`, stepId, { n: "{{ input.n }}" }),
      // No template on the step's own output: a step interrupted mid-attempt is compensated too, and it
      // has no output to read (a missing template value would fail the compensation for good).
      compensate: remotePost(`${remoteUrl}/compensate/${stepId}`, stepId),
      timeouts: { startToCloseMs: 2_000 + Math.floor(random() * 1_001) },
    };
  });
}
