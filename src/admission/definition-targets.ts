import { ConfigError, targetPolicyFor } from "../config";
import type { DefinitionInput } from "../domain/language/schemas";
import { checkTarget, definitionTargetIssues, type TargetPolicy } from "../domain/security/target-policy";
import { sentenceOf } from "../domain/validation-messages";

export interface StartIssue {
  code: "custom";
  path: (string | number)[];
  message: string;
}

/** What keeps a definition from running for a tenant, as a value: callers over RPC get no error classes. */
export type TargetRefusal =
  | { ok: false; code: "validation_failed"; message: string; details: StartIssue[] }
  | { ok: false; code: "not_configured"; message: string };

/** A 400's worth of issues, its message the first one as a sentence about its field (as the front door words it). */
export function validationRefusal(issues: StartIssue[]): Extract<TargetRefusal, { code: "validation_failed" }> {
  const first = issues[0];
  return { ok: false, code: "validation_failed", message: `Invalid request: ${first ? sentenceOf(first.path, first.message) : "it is not valid"}.`, details: issues };
}

/**
 * The tenant's target rules applied to a definition's literal URLs, before anything is stored: what a start checks
 * and what publishing to the registry checks. `at` is where the definition sits in the request body. A malformed
 * ALLOWED_TARGETS refuses everything (fail closed).
 */
export function checkDefinitionTargets(env: Env, tenant: string, definition: DefinitionInput, at: (string | number)[]): TargetRefusal | undefined {
  return checkWithPolicy(env, tenant, (policy) => definitionTargetIssues(definition, policy).map(({ path, message }) => ({ code: "custom", path: [...at, ...path], message })));
}

/** A start's `notify.url`, checked as an action's target would be: the notice is a call to it, as a step's is. */
export function checkNotifyTarget(env: Env, tenant: string, url: string): TargetRefusal | undefined {
  return checkWithPolicy(env, tenant, (policy) => {
    const problem = checkTarget(url, policy);
    return problem ? [{ code: "custom", path: ["notify", "url"], message: problem }] : [];
  });
}

function checkWithPolicy(env: Env, tenant: string, issuesUnder: (policy: TargetPolicy) => StartIssue[]): TargetRefusal | undefined {
  let issues;
  try {
    issues = issuesUnder(targetPolicyFor(env, tenant));
  } catch (error) {
    if (error instanceof ConfigError) return { ok: false, code: "not_configured", message: `${error.message}; fix the ALLOWED_TARGETS setting.` };
    throw error;
  }
  return issues.length === 0 ? undefined : validationRefusal(issues);
}
