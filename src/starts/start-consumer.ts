/**
 * The consumer of `shepherd-starts`: each message `{tenant, start}` is started exactly as `POST /v1/workflows` would
 * start its body (startWorkflowRun), idempotent by id, so a message delivered twice starts one workflow. A message that
 * can never start is recorded as a dead letter, then acked; one refused for now is retried with a delay, never dropped.
 */
import { startWorkflowRun } from "../admission/start-workflow";
import { recordDeadLetter } from "./dead-letters-db";
import { readStartMessage, type ReadStart } from "./start-message";
import { deferredAfterFailure, verdictOf, type Deferral, type StartVerdict } from "./start-verdict";
import { knownTenants } from "./tenants";

/**
 * After this many deliveries a deferred message is sent again as a fresh copy (with its workflow id filled in, so the
 * copy starts what the original would have) and the original acked: the queue counts every retry against
 * `max_retries` and keeps a message only for its retention period, and a start that is merely waiting (a long
 * back-pressure, D1 down for hours) must never run out of either. wrangler.toml's max_retries (100) stays above it.
 */
export const COPY_AFTER_DELIVERIES = 50;

export async function consumeStartBatch(batch: MessageBatch<unknown>, env: Env): Promise<void> {
  await Promise.all(batch.messages.map((message) => consumeStart(message, env)));
}

async function consumeStart(message: Message<unknown>, env: Env): Promise<void> {
  let copy: unknown = message.body;
  let verdict: StartVerdict;
  try {
    const read = await readFor(env, message);
    if (read.ok) copy = { tenant: read.tenant, start: read.start };
    verdict = read.ok ? verdictOf(await startWorkflowRun(env, read.tenant, read.start), message.attempts) : { kind: "dead", error: read.error };
    // Durable before acked: a dead letter that could not be recorded is retried like any failure.
    if (verdict.kind === "dead") {
      await recordDeadLetter(env.DB, { tenant: read.tenant, messageId: message.id, body: message.body, error: verdict.error, attempts: message.attempts, at: Date.now() });
      // In the log too: with several tenants and no STARTS_DEAD_LETTER_TENANT, those naming no tenant are shown to nobody.
      console.warn(JSON.stringify({ message: "start dead-lettered", id: message.id, tenant: read.tenant ?? null, error: verdict.error.message }));
    }
  } catch (error) {
    verdict = deferredAfterFailure(message.attempts, String(error));
  }
  if (verdict.kind === "deferred") await defer(env, message, copy, verdict);
  else message.ack();
}

async function readFor(env: Env, message: Message<unknown>): Promise<ReadStart> {
  const known = knownTenants(env);
  // The deployment's setting is broken, not the message: it is read again once API_TOKENS is fixed.
  if (!known.ok) throw new Error(`${known.problem}; fix the API_TOKENS secret`);
  return readStartMessage(message.body, message.id, known.tenants);
}

async function defer(env: Env, message: Message<unknown>, copy: unknown, verdict: Deferral): Promise<void> {
  const { delaySeconds, reason } = verdict;
  console.log(JSON.stringify({ message: "start deferred", id: message.id, attempts: message.attempts, delaySeconds, reason }));
  if (message.attempts >= COPY_AFTER_DELIVERIES) {
    try {
      await env.STARTS.send(copy, { delaySeconds });
      message.ack();
      return;
    } catch (error) {
      console.error(JSON.stringify({ message: "could not send a deferred start again; retrying it", id: message.id, error: String(error) }));
    }
  }
  message.retry({ delaySeconds });
}
