// The D1 databases a wrangler.toml binds, for the tools that apply the migrations: the workflow index is spread
// over DB, DB_1 ... (INDEX_SHARDS), and every bound one gets the migrations, used or not, so raising the count
// never meets a database without tables.
import { readFileSync } from "node:fs";

/** The bindings of wrangler.toml's [[d1_databases]] tables, in the order the file lists them. */
export function d1Bindings(tomlPath: string): string[] {
  const tables = readFileSync(tomlPath, "utf8").split(/^(?=\s*\[)/m);
  return tables
    .filter((table) => /^\s*\[\[d1_databases\]\]/.test(table))
    .map((table) => /^\s*binding\s*=\s*"([^"]+)"/m.exec(table)?.[1])
    .filter((binding): binding is string => binding !== undefined);
}
