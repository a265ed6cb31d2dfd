/**
 * `ALLOWED_TARGETS`: an optional per-tenant allowlist of hosts that `http` actions may call, on top of the
 * SSRF rules. JSON object from tenant to host patterns; `"*"` applies to tenants not named. A pattern is a
 * host name (`api.example.com`) or a wildcard for its subdomains (`*.example.com`, which does not match
 * `example.com` itself). A tenant with no entry and no `"*"` may call any host the SSRF rules allow.
 */
import { z } from "zod";

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
    return { ok: false, problem: `ALLOWED_TARGETS ${issue?.path.join(".") ?? ""}: ${issue?.message ?? "invalid"}` };
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
