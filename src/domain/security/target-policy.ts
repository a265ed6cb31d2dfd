/**
 * Which URLs an `http` action may call: one policy, applied at start and by the agent before every request and
 * redirect. A workflow definition is user input, so without it an agent could be pointed at the deployment's
 * own network (SSRF). Private targets are allowed only where the deployment says so (local development, tests).
 *
 * On top of that, `ALLOWED_TARGETS`: an optional per-tenant allowlist of hosts. JSON object from tenant to host
 * patterns; `"*"` applies to tenants not named. A pattern is a host name (`api.example.com`) or a wildcard for
 * its subdomains (`*.example.com`, which does not match `example.com` itself). A tenant with no entry and no
 * `"*"` may call any host the SSRF rules allow.
 */
import { z } from "zod";
import type { DefinitionInput } from "../language/schemas";
import { sentenceOf } from "../validation-messages";

/** What one tenant's actions may call. */
export interface TargetPolicy {
  allowPrivate: boolean;
  /** The tenant's `ALLOWED_TARGETS` host patterns; undefined when the tenant is not limited. */
  allowedHosts?: readonly string[] | undefined;
}

const PRIVATE_SUFFIXES = [".localhost", ".internal", ".local", ".lan", ".home.arpa"];

/** Why the URL may not be called, or undefined when it may. */
export function checkTarget(rawUrl: string, policy: TargetPolicy): string | undefined {
  let url: URL;
  try {
    url = new URL(rawUrl);
  } catch {
    return `"${rawUrl}" is not an absolute URL`;
  }
  if (url.protocol !== "https:" && !(policy.allowPrivate && url.protocol === "http:")) {
    return `only https URLs may be called (got ${url.protocol})`;
  }
  if (url.username || url.password) return "URLs with credentials (userinfo) are refused";
  if (policy.allowedHosts && !hostMatches(url.hostname, policy.allowedHosts)) {
    return `host ${url.hostname} is not in this tenant's ALLOWED_TARGETS`;
  }
  if (policy.allowPrivate) return undefined;
  // "localhost." and "metadata.internal." are the same hosts written fully qualified.
  const host = url.hostname.toLowerCase().replace(/\.+$/, "");
  if (host.startsWith("[") || /^[\d.]+$/.test(host) || /^0x/i.test(host)) {
    return `IP literal hosts are refused (${host})`;
  }
  if (host === "localhost" || PRIVATE_SUFFIXES.some((suffix) => host.endsWith(suffix)) || !host.includes(".")) {
    return `private host names are refused (${host})`;
  }
  return undefined;
}

/**
 * The literal action and compensation URLs of a definition that the policy refuses, each with its path in the
 * definition. Templated URLs are left to the agent, which checks every URL again before each request.
 */
export function definitionTargetIssues(definition: DefinitionInput, policy: TargetPolicy): { path: (string | number)[]; message: string }[] {
  return definition.steps.flatMap((step, index) =>
    (["action", "compensate"] as const).flatMap((field) => {
      const action = step[field];
      const url = action?.type === "http" ? action.url : undefined;
      const problem = url === undefined || url.includes("{{") ? undefined : checkTarget(url, policy);
      return problem ? [{ path: ["steps", index, field, "url"], message: problem }] : [];
    }),
  );
}

const HostPatternSchema = z
  .string()
  .regex(/^(\*\.)?[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*\.?$/, "must be a host name or *.host name")
  .transform((pattern) => pattern.toLowerCase().replace(/\.$/, ""));

const AllowedTargetsSchema = z.record(z.string(), z.array(HostPatternSchema));

export type AllowedTargets = z.infer<typeof AllowedTargetsSchema>;

export type ParsedAllowedTargets = { ok: true; value: AllowedTargets } | { ok: false; problem: string };

/** Accepts the JSON text (a secret or `--var`) or an object (a `[vars]` table in wrangler.toml). */
export function parseAllowedTargets(raw: unknown): ParsedAllowedTargets {
  if (raw === undefined || raw === null || raw === "") return { ok: true, value: {} };
  let value: unknown = raw;
  if (typeof raw === "string") {
    try {
      value = JSON.parse(raw);
    } catch {
      return { ok: false, problem: "ALLOWED_TARGETS is not valid JSON" };
    }
  }
  const parsed = AllowedTargetsSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return { ok: false, problem: sentenceOf(["ALLOWED_TARGETS", ...(issue?.path ?? [])], issue?.message ?? "is not valid") };
  }
  return { ok: true, value: parsed.data };
}

/** The tenant's host patterns, or undefined when the tenant is not limited. */
export function allowedHostsFor(targets: AllowedTargets, tenant: string): readonly string[] | undefined {
  return targets[tenant] ?? targets["*"];
}

export function hostMatches(host: string, patterns: readonly string[]): boolean {
  const name = host.toLowerCase().replace(/\.+$/, "");
  return patterns.some((pattern) => (pattern.startsWith("*.") ? name.endsWith(pattern.slice(1)) : name === pattern));
}
