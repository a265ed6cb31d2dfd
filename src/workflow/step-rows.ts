import type { z } from "zod";
import type { StepExchange } from "../domain/exchange/exchange";
import type { WorkflowPlan } from "../domain/language/plan";
import { startingStep, StoredStepSchema, type StepState } from "../domain/machine/state";
import type { ExchangeRows } from "./exchange-rows";

type Query = <T extends Record<string, SqlStorageValue>>(statement: string, ...bindings: unknown[]) => { toArray(): T[] };
type StepRow = { step_id: string; state_json: string };
type StoredStep = z.output<typeof StoredStepSchema>;

/**
 * The steps table's rows, for the store: statements run through its `query`, inside its commit's transaction. A step
 * of the plan has a row only once it has left the state a start gives it (`startingStep`): until then the row would
 * say nothing the plan does not. So a start writes the rows of the steps it dispatches, not one per step, and a step's
 * first row is its first change. A step of the plan read back without a row is its starting state; objects stored
 * before this have a row for every step and read the same.
 */
export class StepRows {
  /** Each step as last read or written, serialized, to find what a commit changed. Never authoritative. */
  private persisted = new Map<string, string>();

  constructor(
    private readonly query: Query,
    private readonly exchanges: ExchangeRows,
  ) {}

  /** The steps in the state's order: the plan's (from their rows, or as they started), then map items', by position. */
  load(plan: WorkflowPlan): StoredStep[] {
    const rows = this.query<StepRow>("SELECT step_id, state_json FROM steps ORDER BY position").toArray();
    const stored = new Map(rows.map((row) => [row.step_id, JSON.parse(row.state_json) as unknown]));
    const planned = plan.steps.map((step) => stored.get(step.id) ?? startingStep(step));
    const planIds = new Set(plan.steps.map((step) => step.id));
    const items = rows.filter((row) => !planIds.has(row.step_id)).map((row) => stored.get(row.step_id));
    return [...planned, ...items].map((value) => {
      const step = StoredStepSchema.parse(value);
      // Compare later writes against the parsed form, whose key order is the schema's.
      this.persisted.set(step.id, JSON.stringify(step));
      return step;
    });
  }

  /**
   * Writes the rows of the steps the commit changed, and deletes those of map items that left the state. Returns what
   * it wrote, for `committed` once the transaction has.
   */
  write(steps: readonly StepState[], plan: WorkflowPlan, exchange: StepExchange | undefined): Map<string, string> {
    const written = new Map<string, string>();
    steps.forEach((step, position) => {
      const json = JSON.stringify(step);
      // An exchange rides on a row written anyway: a step whose row did not change gets none (a stale report's).
      if (json === (this.persisted.get(step.id) ?? startingJson(plan, step, position))) return;
      if (exchange?.stepId === step.id) this.exchanges.writeStepWith({ id: step.id, position, json }, exchange);
      else this.query("INSERT INTO steps (step_id, position, state_json) VALUES (?, ?, ?) ON CONFLICT (step_id) DO UPDATE SET state_json = excluded.state_json", step.id, position, json);
      written.set(step.id, json);
    });
    if (plan.itemSteps) this.deleteLeft(steps);
    return written;
  }

  committed(written: Map<string, string>): void {
    for (const [id, json] of written) this.persisted.set(id, json);
  }

  forget(): void {
    this.persisted.clear();
  }

  /** A map's item that ended left the state for its row in map_items: its step row goes too. */
  private deleteLeft(steps: readonly StepState[]): void {
    const kept = new Set(steps.map((step) => step.id));
    for (const id of [...this.persisted.keys()].filter((known) => !kept.has(known))) {
      this.query("DELETE FROM steps WHERE step_id = ?", id);
      this.persisted.delete(id);
    }
  }
}

/**
 * A step of the plan with no row yet is as it started: the plan's steps come first in the state, in the plan's order,
 * so its plan is the one at its position. Undefined for a map's item.
 */
function startingJson(plan: WorkflowPlan, step: StepState, position: number): string | undefined {
  const planned = plan.steps[position];
  return planned?.id === step.id ? JSON.stringify(startingStep(planned)) : undefined;
}
