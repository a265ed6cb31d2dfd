import type { z } from "zod";
import type { StepExchange } from "../domain/exchange/exchange";
import type { WorkflowPlan } from "../domain/language/plan";
import { ENDED_STEP_STATUSES } from "../domain/contract";
import { startingStep, StoredStepSchema, type StepState } from "../domain/machine/state";
import type { ExchangeRows } from "./exchange-rows";

type Query = <T extends Record<string, SqlStorageValue>>(statement: string, ...bindings: unknown[]) => { toArray(): T[] };
type StepRow = { step_id: string; state_json: string };
type StoredStep = z.output<typeof StoredStepSchema>;

/**
 * Characters the open steps may take on the workflow's row. A definition may hold 200 steps, each with up to 128 KiB
 * of progress and 100 attempts: past this, the commit writes each open step to its own row instead, so the row stays
 * far under the runtime's limit.
 */
const OPEN_STEPS_MAX_CHARS = 256_000;

/**
 * The steps table's rows, for the store: statements run through its `query`, inside its commit's transaction. A step
 * of the plan has a row only once it has left the state a start gives it (`startingStep`): until then the row would
 * say nothing the plan does not. So a start writes the rows of the steps it dispatches, not one per step, and a step's
 * first row is its first change. A step of the plan read back without a row is its starting state; objects stored
 * before this have a row for every step and read the same.
 *
 * A step of the plan that changed but is still open (scheduled, running, waiting…) rides on the workflow's row instead
 * (`open_steps_json`), which every commit writes anyway: it gets its own row when it ends, or when the commit records
 * an attempt's exchange (kept on that row). So the commit that ends one step and starts the next writes one step row,
 * not two. Read back, an open step from the workflow's row wins over its own row, which is older.
 */
export class StepRows {
  /** Each step as last read or written, serialized, to find what a commit changed. Never authoritative. */
  private persisted = new Map<string, string>();

  constructor(
    private readonly query: Query,
    private readonly exchanges: ExchangeRows,
  ) {}

  /** The steps in the state's order: the plan's (open, from their rows, or as they started), then map items', by position. */
  load(plan: WorkflowPlan, openStepsJson: string | null): StoredStep[] {
    const rows = this.query<StepRow>("SELECT step_id, state_json FROM steps ORDER BY position").toArray();
    const stored = new Map(rows.map((row) => [row.step_id, JSON.parse(row.state_json) as unknown]));
    const open = openStepsJson === null ? {} : (JSON.parse(openStepsJson) as Record<string, unknown>);
    const planIds = new Set(plan.steps.map((step) => step.id));
    const planned = plan.steps.map((step) => {
      // Later writes are compared with the step's row (or its starting state), parsed, whose key order is the schema's.
      const row = StoredStepSchema.parse(stored.get(step.id) ?? startingStep(step));
      this.persisted.set(step.id, JSON.stringify(row));
      return open[step.id] === undefined ? row : StoredStepSchema.parse(open[step.id]);
    });
    const items = rows.filter((row) => !planIds.has(row.step_id)).map((row) => {
      const step = StoredStepSchema.parse(stored.get(row.step_id));
      this.persisted.set(step.id, JSON.stringify(step));
      return step;
    });
    return [...planned, ...items];
  }

  /**
   * Writes the rows of the steps the commit changed that ended or carry its exchange, and deletes those of map items
   * that left the state. Returns what it wrote, for `committed` once the transaction has, and the plan's other changed
   * steps, still open, as the workflow row's `open_steps_json` (null: none).
   */
  write(steps: readonly StepState[], plan: WorkflowPlan, exchange: StepExchange | undefined): { written: Map<string, string>; openStepsJson: string | null } {
    const written = new Map<string, string>();
    const open: { id: string; position: number; json: string }[] = [];
    const writeRow = (id: string, position: number, json: string): void => {
      if (exchange?.stepId === id) this.exchanges.writeStepWith({ id, position, json }, exchange);
      else this.query("INSERT INTO steps (step_id, position, state_json) VALUES (?, ?, ?) ON CONFLICT (step_id) DO UPDATE SET state_json = excluded.state_json", id, position, json);
      written.set(id, json);
    };
    steps.forEach((step, position) => {
      const json = JSON.stringify(step);
      const starting = startingJson(plan, step, position);
      // An exchange rides on a row written anyway: a step whose row did not change gets none (a stale report's).
      if (json === (this.persisted.get(step.id) ?? starting)) return;
      const rides = starting !== undefined && exchange?.stepId !== step.id && !ENDED_STEP_STATUSES.includes(step.status);
      if (rides) open.push({ id: step.id, position, json });
      else writeRow(step.id, position, json);
    });
    if (plan.itemSteps) this.deleteLeft(steps);
    const openStepsJson = open.length === 0 ? null : `{${open.map(({ id, json }) => `${JSON.stringify(id)}:${json}`).join(",")}}`;
    if (openStepsJson === null || openStepsJson.length <= OPEN_STEPS_MAX_CHARS) return { written, openStepsJson };
    for (const { id, position, json } of open) writeRow(id, position, json);
    return { written, openStepsJson: null };
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
