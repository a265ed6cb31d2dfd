import { HAND_OFF_MAX } from "../../agents/host-reservations";
import { agentHostFor } from "../../agents/host-shard";
import { backoffMs } from "../../domain/machine/backoff";
import type { AttemptKind } from "../../domain/machine/state";
import type { TaskMessage } from "../../domain/machine/task-message";
import { signTaskToken, TASK_TOKEN_GRACE_MS } from "../../domain/security/task-token";
import { SEND_RETRY } from "../delivery-policy";
import type { OutboxRow, OutboxRows } from "../outbox-rows";
import { taskQueueFor } from "../task-queues";
import type { DeliveredFor, Delivery } from "./delivery";
import { earliestAfter, InFlight } from "./in-flight";

/** The attempt a task message names; the message itself (with its signed token) is made when it is sent. */
export interface QueuedTask {
  stepId: string;
  attempt: number;
  kind: AttemptKind;
}

/** Queues' `sendBatch` limit: 100 messages (and 256 KB; a task message is under 1.2 KB). */
const SEND_BATCH_MAX = 100;

/**
 * The message naming one attempt, with its signed task token. A claimed attempt's token expires a grace period
 * after its start-to-close deadline; a queued one's cannot know its deadline yet and never leaves Shepherd.
 */
export async function taskMessage(env: Env, workflow: Omit<DeliveredFor, "handOff">, task: QueuedTask, claimedDeadlineAt?: number, pool?: string): Promise<TaskMessage> {
  const claims = { tenant: workflow.tenant, workflowId: workflow.id, stepId: task.stepId, attempt: task.attempt };
  const expiry = claimedDeadlineAt === undefined ? {} : { expiresAt: claimedDeadlineAt + TASK_TOKEN_GRACE_MS, ...(pool === undefined ? {} : { pool }) };
  const token = await signTaskToken({ ...claims, ...expiry }, env.TASK_TOKEN_SECRET);
  // The workflow's name rides along (unsigned: it decides nothing but whose backlog this is, for fair shares).
  return { ...claims, name: workflow.name, kind: task.kind, token };
}

/**
 * Task messages to the queue. One send of each row at a time: calls that arrive meanwhile neither repeat it nor
 * wait for it. A failed send backs off and waits for the alarm; the attempt's own deadlines are not touched.
 */
export class TaskDelivery implements Delivery {
  private readonly inFlight = new InFlight();

  constructor(
    private readonly rows: OutboxRows,
    private readonly env: Env,
  ) {}

  /** A task message due now is left out: the commit that wrote it sends every unsent one now. */
  nextAttemptAt(now: number): number | undefined {
    return earliestAfter(this.rows.ofKind("task").map((row) => row.nextAttemptAt), now);
  }

  async deliver(workflow: DeliveredFor): Promise<boolean> {
    if (workflow.handOff) await this.handOff(workflow);
    const unsent = this.inFlight.idle(this.rows.ofKind("task"));
    if (unsent.length === 0) return true;
    return this.inFlight.during(unsent, () => this.send(workflow, unsent));
  }

  /**
   * The supervisor's retries without the queue hop, for a tenant under its fair share of a host (see HandOff):
   * each message goes to its agent host, whose claim settles the row in the claim's own commit. A host without
   * room, a refusal or a failed call leaves the row unsent, and the queue gets it as usual; should this instance
   * die first, the row's lease has the alarm send it. Nothing is lost and no attempt is spent.
   */
  private async handOff(workflow: DeliveredFor): Promise<void> {
    const rows = this.inFlight.idle(this.rows.ofKind("task")).slice(0, HAND_OFF_MAX);
    await this.inFlight.during(rows, () =>
      Promise.all(
        rows.map(async (row) => {
          const message = await taskMessage(this.env, workflow, row.payload as QueuedTask);
          await agentHostFor(this.env, message)
            .take(message, { handOff: workflow.handOff })
            .catch((error: unknown) => console.error(JSON.stringify({ message: "hand-off failed; sending through the queue", workflowId: workflow.id, error: String(error) })));
        }),
      ),
    );
  }

  private async send(workflow: DeliveredFor, unsent: OutboxRow[]): Promise<boolean> {
    let accepted = 0;
    try {
      const messages = await Promise.all(unsent.map(async (row) => ({ body: await taskMessage(this.env, workflow, row.payload as QueuedTask) })));
      const queue = taskQueueFor(this.env, workflow.id);
      for (; accepted < messages.length; accepted += SEND_BATCH_MAX) {
        await queue.sendBatch(messages.slice(accepted, accepted + SEND_BATCH_MAX));
        this.rows.remove(unsent.slice(accepted, accepted + SEND_BATCH_MAX).map((row) => row.seq));
      }
      return true;
    } catch (error) {
      const left = unsent.slice(accepted);
      const retryAt = Date.now() + backoffMs(Math.min(...left.map((row) => row.attempts)), SEND_RETRY);
      console.error(JSON.stringify({ message: "enqueue failed; the alarm will send again", workflowId: workflow.id, unsent: left.length, retryAt, error: String(error) }));
      for (const row of left) this.rows.update(row.seq, { attempts: row.attempts + 1, nextAttemptAt: retryAt });
      return false;
    }
  }
}
