/**
 * A message of the STARTS queue, `{tenant, start}`: the start body exactly as `POST /v1/workflows` takes it, for
 * the tenant that body would be sent as. Read here into a start or the reason it can never be one. Pure: the
 * tenants the deployment knows are a parameter.
 */
import { z } from "zod";
import { StartWorkflowSchema, type StartWorkflowInput } from "../domain/language/definition";
import { TENANT_PATTERN } from "../domain/security/api-tokens";
import { sentenceOf } from "../domain/validation-messages";
import type { DeadLetterError } from "./dead-letter";

export const StartMessageSchema = z.strictObject({
  tenant: z.string().regex(TENANT_PATTERN, "must be a tenant of API_TOKENS"),
  start: StartWorkflowSchema,
});

export type StartMessage = z.infer<typeof StartMessageSchema>;

/** A start as the consumer makes it: always with an id, so that delivering its message again starts nothing twice. */
export type QueuedStart = StartWorkflowInput & { id: string };

export type ReadStart =
  | { ok: true; tenant: string; start: QueuedStart }
  /** `tenant` is the deployment's tenant the dead letter belongs to: absent when the message named none it knows. */
  | { ok: false; tenant?: string; error: DeadLetterError };

/**
 * The start a message asks for, or why it can never be one. A start without an id gets `msg_<queue message id>`:
 * the queue keeps a message's id across its deliveries, so a redelivered message finds the workflow the first made.
 */
export async function readStartMessage(body: unknown, messageId: string, knownTenants: ReadonlySet<string>): Promise<ReadStart> {
  const named = namedTenant(body);
  const tenant = named !== undefined && knownTenants.has(named) ? named : undefined;
  const parsed = await StartMessageSchema.safeParseAsync(body);
  if (!parsed.success) return { ok: false, ...(tenant === undefined ? {} : { tenant }), error: invalidMessage(parsed.error.issues) };
  if (tenant === undefined) {
    return {
      ok: false,
      error: { code: "unknown_tenant", message: `No tenant "${parsed.data.tenant}" in this deployment's API_TOKENS: the message's tenant must be one of them.` },
    };
  }
  return { ok: true, tenant, start: { ...parsed.data.start, id: parsed.data.start.id ?? queuedStartId(messageId) } };
}

/** The tenant a message names, if it names one at all; whether it is well-formed and known is checked after. */
export function namedTenant(body: unknown): string | undefined {
  const tenant = (body as { tenant?: unknown } | null)?.tenant;
  return typeof tenant === "string" ? tenant : undefined;
}

/** The workflow id a message names, if it names one at all. */
export function namedWorkflowId(body: unknown): string | undefined {
  const id = (body as { start?: { id?: unknown } } | null)?.start?.id;
  return typeof id === "string" ? id : undefined;
}

/** Queue message ids are hex; the id is made to fit the contract's pattern whatever they are. */
function queuedStartId(messageId: string): string {
  return `msg_${messageId.replace(/[^A-Za-z0-9_.:-]/g, "_").slice(0, 124)}`;
}

/** The front door's words for a 400: the first issue as a sentence about its field. */
function invalidMessage(issues: z.core.$ZodIssue[]): DeadLetterError {
  const details = issues.map(({ path, message, code }) => ({ path: path.map((key) => (typeof key === "symbol" ? String(key) : key)), message, code }));
  const first = details[0];
  return { code: "validation_failed", message: `Invalid message: ${first ? sentenceOf(first.path, first.message, "the message") : "it is not valid"}.`, details };
}
