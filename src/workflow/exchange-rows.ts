import { AttemptExchangeSchema, KEPT_EXCHANGES, type AttemptExchange, type StepExchange } from "../domain/exchange/exchange";

type Query = <T extends Record<string, SqlStorageValue>>(statement: string, ...bindings: unknown[]) => { toArray(): T[] };

/**
 * The attempts' exchanges, a column of each step's row (`exchanges_json`: attempt number → exchange). Written only
 * in the statement that writes the step's row anyway, so an exchange costs no row; never read with the state, so
 * loading a workflow costs no more for it. SQLite merges the new part into what is stored (a worker task's request
 * at its hand-out, its answer with the report) and drops exchanges older than the latest KEPT_EXCHANGES attempts.
 */
export class ExchangeRows {
  constructor(private readonly query: Query) {}

  /** Writes the step's row as the store does, with `stored`'s exchange merged into its column. */
  writeStepWith(step: { id: string; position: number; json: string }, stored: StepExchange): void {
    this.query(
      `INSERT INTO steps (step_id, position, state_json, exchanges_json) VALUES (?, ?, ?, json_object(?, json(?)))
       ON CONFLICT (step_id) DO UPDATE SET state_json = excluded.state_json, exchanges_json = (
         SELECT json_group_object(key, json(value)) FROM json_each(json_patch(COALESCE(steps.exchanges_json, '{}'), excluded.exchanges_json))
         WHERE CAST(key AS INTEGER) > ?)`,
      step.id, step.position, step.json, String(stored.attempt), JSON.stringify(stored.exchange), stored.attempt - KEPT_EXCHANGES,
    );
  }

  /** The exchange stored for the step's attempt `n`; undefined when none is. */
  read(stepId: string, n: number): AttemptExchange | undefined {
    const [row] = this.query<{ exchange: string | null }>("SELECT json_extract(exchanges_json, ?) AS exchange FROM steps WHERE step_id = ?", `$."${n}"`, stepId).toArray();
    return row?.exchange ? AttemptExchangeSchema.parse(JSON.parse(row.exchange)) : undefined;
  }
}
