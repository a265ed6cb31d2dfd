import { agentHostFor } from "../../agents/host-shard";
import { backoffMs } from "../../domain/machine/backoff";
import type { ClaimedTask } from "../../domain/machine";
import { SEND_RETRY } from "../delivery-policy";
import type { OutboxRow, OutboxRows } from "../outbox-rows";
import type { DeliveredFor, Delivery } from "./delivery";
import { InFlight, leasedAttemptAt } from "./in-flight";
import { taskMessage } from "./tasks";

/**
 * Attempts a start claimed in its own transition, handed to the agent hosts that reserved room for them (see
 * `reserveAgentHosts`): the host runs each without a claim of its own, so nothing calls back into the object. A
 * row is a lease like a task message's: should this instance die before the host has it, the alarm hands it over
 * then; once the attempt's start-to-close deadline has passed, the supervisor's retry owns it and the row goes.
 */
export class HandOffDelivery implements Delivery {
  private readonly inFlight = new InFlight();

  constructor(
    private readonly rows: OutboxRows,
    private readonly env: Env,
  ) {}

  nextAttemptAt(now: number): number | undefined {
    const times = this.rows.ofKind("handoff").map((row) => leasedAttemptAt(row.nextAttemptAt, now));
    return times.length === 0 ? undefined : Math.min(...times);
  }

  async deliver(workflow: DeliveredFor): Promise<boolean> {
    // A fresh row goes at once; one whose hand-off failed waits for its backoff.
    const due = this.inFlight.idle(this.rows.ofKind("handoff")).filter((row) => row.attempts === 0 || row.nextAttemptAt <= Date.now());
    const handed = await this.inFlight.during(due, () => Promise.all(due.map((row) => this.handOver(workflow, row))));
    return handed.every(Boolean);
  }

  private async handOver(workflow: DeliveredFor, row: OutboxRow): Promise<boolean> {
    const task = row.payload as ClaimedTask;
    try {
      // The remote's token expires with the attempt, as one minted at a claim does.
      const message = await taskMessage(this.env, workflow, task, task.deadlineAt);
      await agentHostFor(this.env, message).run(message, { ...task, token: message.token });
      this.rows.remove([row.seq]);
      return true;
    } catch (error) {
      console.error(JSON.stringify({ message: "hand-off failed; the alarm hands it over again", workflowId: workflow.id, stepId: task.stepId, error: String(error) }));
      if (Date.now() >= task.deadlineAt) this.rows.remove([row.seq]);
      else this.rows.update(row.seq, { attempts: row.attempts + 1, nextAttemptAt: Date.now() + backoffMs(row.attempts, SEND_RETRY) });
      return false;
    }
  }
}
