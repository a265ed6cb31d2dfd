// The workflows of the language (lib/language.ts) as the checks on events, sleeps and their attempts read them:
// each with its plan, its final reading and the driver's record of what was sent.
import type { WorkflowView } from "../api-shapes.ts";
import type { SoakWorkflow } from "../definitions.ts";
import type { Final } from "../finals.ts";
import type { LanguagePlan } from "../language.ts";

export interface LanguageCase {
  wf: SoakWorkflow;
  plan: LanguagePlan;
  f: Final;
  view: WorkflowView;
}

/** The workflows that use the language, started and read at the end. */
export function languageCases(finals: readonly Final[], workflows: readonly SoakWorkflow[]): LanguageCase[] {
  const byId = new Map(finals.map((f) => [f.id, f]));
  return workflows.flatMap((wf) => {
    const f = byId.get(wf.id);
    return wf.language && f?.started && f.view ? [{ wf, plan: wf.language, f, view: f.view }] : [];
  });
}
