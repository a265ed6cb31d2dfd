import { startRequestFor, type StartOutcome } from "../../admission/start-request";
import { StartWorkflowSchema } from "../../domain/language/definition";
import type { ChildStart } from "../../domain/machine";
import { sentenceOf } from "../../domain/validation-messages";
import type { OutboxRow, OutboxRows } from "../outbox-rows";
import type { DeliveredFor, OwnObject } from "./delivery";
import { EachRowDelivery } from "./each-row";
import { workflowObject } from "./workflow-stub";

/** A `workflow` step's start of its child, as its commit wrote it. */
interface ChildStartRow {
  stepId: string;
  attempt: number;
  start: ChildStart;
  depth: number;
}

/**
 * Starts a `workflow` step's child through the same start path as `POST /v1/workflows` (a `definitionRef` read from
 * the registry, the targets checked, back-pressure, the plan), then records on the parent what came of it, and only
 * then lets the row go. The start is idempotent by the child's id, and one the child already has from this step
 * counts as made, so a row delivered again after a crash (started, not yet recorded) makes no second child.
 * Back-pressure defers the row (the alarm tries again when the front door would say), never drops it; a refusal
 * (no such definition, a definition refused, the id taken by another workflow) fails the step for good.
 */
export class ChildStartDelivery extends EachRowDelivery {
  constructor(
    rows: OutboxRows,
    private readonly env: Env,
    /** The parent's own object, where what came of the start is recorded. */
    private readonly parent: OwnObject,
  ) {
    super(rows, "child-start");
  }

  protected async deliverRow(workflow: DeliveredFor, row: OutboxRow): Promise<boolean> {
    const { stepId, start } = row.payload as ChildStartRow;
    const log = { message: "child workflow not started yet; the alarm tries again", workflowId: workflow.id, stepId, childId: start.id };
    let outcome: StartOutcome;
    try {
      outcome = await this.startChild(workflow, row.payload as ChildStartRow);
    } catch (error) {
      return this.later(row, { ...log, error: String(error) });
    }
    if (!outcome.ok && outcome.code === "overloaded") return this.later(row, { ...log, error: outcome.message }, Date.now() + outcome.retryAfterSeconds * 1_000);
    // A crash here leaves the child started and the row in place: the next delivery finds the child, and records it.
    const childId = start.id;
    await this.parent.record(
      outcome.ok
        ? { type: "ChildWorkflowStarted", stepId, childId, created: outcome.created }
        : { type: "ChildWorkflowRefused", stepId, childId, error: { message: `the child workflow "${childId}" could not start: ${outcome.message}` } },
    );
    this.rows.remove([row.seq]);
    return true;
  }

  private async startChild(workflow: DeliveredFor, row: ChildStartRow): Promise<StartOutcome> {
    const body = StartWorkflowSchema.safeParse(row.start);
    if (!body.success) {
      const issues = body.error.issues.slice(0, 3).map((issue) => sentenceOf(issue.path, issue.message));
      return { ok: false, code: "conflict", message: `its start is not valid (${issues.join("; ")})` };
    }
    const parent = { id: workflow.id, stepId: row.stepId, attempt: row.attempt, depth: row.depth };
    const prepared = await startRequestFor(this.env, workflow.tenant, body.data, { parent });
    if (!prepared.ok) return prepared;
    return workflowObject(this.env, workflow.tenant, prepared.request.id).start(prepared.request);
  }
}
