/**
 * The definitions registry in D1: the only module that speaks SQL to the `definitions` table. A version is an
 * immutable row; each tenant's versions of a name count 1, 2, 3 … and a content hash can hold only one of them.
 */
import { z } from "zod";
import { DefinitionSchema } from "../domain/language/definition";
import type { DefinitionInput } from "../domain/language/schemas";

/** One version, without its content: what publishing answers and what a list shows. */
export interface DefinitionVersion {
  name: string;
  version: number;
  hash: string;
  createdAt: number;
}

export type StoredDefinition = DefinitionVersion & { definition: DefinitionInput };

const VersionRowSchema = z.object({ name: z.string(), version: z.number(), hash: z.string(), created_at: z.number() });
const DefinitionRowSchema = VersionRowSchema.extend({ definition_json: z.string() });

function toVersion(row: unknown): DefinitionVersion {
  const { name, version, hash, created_at } = VersionRowSchema.parse(row);
  return { name, version, hash, createdAt: created_at };
}

/** A publish that lost the race for a version number to another publish of the same name: it tries again. */
const PUBLISH_TRIES = 3;

/**
 * Stores `definition` as the next version of its name, unless a version of that name already holds the same
 * content (`hash`): then that version, with `created: false`. The number is MAX + 1 taken in the INSERT itself, so
 * two publishes cannot both get it; should one lose anyway, the primary key refuses it and it tries again.
 */
export async function publishDefinition(
  db: D1Database,
  tenant: string,
  definition: DefinitionInput,
  hash: string,
  now: number,
): Promise<{ created: boolean; version: DefinitionVersion }> {
  const json = JSON.stringify(definition);
  for (let attempt = 1; ; attempt++) {
    try {
      const inserted = await db
        .prepare(
          `INSERT INTO definitions (tenant, name, version, hash, definition_json, created_at)
           SELECT ?1, ?2, COALESCE(MAX(version), 0) + 1, ?3, ?4, ?5 FROM definitions WHERE tenant = ?1 AND name = ?2
           ON CONFLICT (tenant, name, hash) DO NOTHING
           RETURNING name, version, hash, created_at`,
        )
        .bind(tenant, definition.name, hash, json, now)
        .first();
      if (inserted) return { created: true, version: toVersion(inserted) };
      const existing = await db
        .prepare("SELECT name, version, hash, created_at FROM definitions WHERE tenant = ? AND name = ? AND hash = ?")
        .bind(tenant, definition.name, hash)
        .first();
      if (existing) return { created: false, version: toVersion(existing) };
      throw new Error(`definition "${definition.name}" was neither stored nor found by its hash`);
    } catch (error) {
      if (attempt >= PUBLISH_TRIES || !/UNIQUE constraint failed/.test(String(error))) throw error;
    }
  }
}

/**
 * One version with its content: `version`, or the latest when it is absent. One read, which is all a start by
 * reference adds to an inline start. Undefined when the tenant has no such name or version.
 */
export async function findDefinition(db: D1Database, tenant: string, name: string, version?: number): Promise<StoredDefinition | undefined> {
  const columns = "name, version, hash, created_at, definition_json";
  const statement =
    version === undefined
      ? db.prepare(`SELECT ${columns} FROM definitions WHERE tenant = ? AND name = ? ORDER BY version DESC LIMIT 1`).bind(tenant, name)
      : db.prepare(`SELECT ${columns} FROM definitions WHERE tenant = ? AND name = ? AND version = ?`).bind(tenant, name, version);
  const row = await statement.first();
  if (!row) return undefined;
  const parsed = DefinitionRowSchema.parse(row);
  // Checked as it went in; checked again coming out, as every row read back is.
  return { ...toVersion(parsed), definition: DefinitionSchema.parse(JSON.parse(parsed.definition_json)) };
}

/** One page of a tenant's names, in name order, each with its latest version; `next` is set when more follow. */
export async function listLatestVersions(
  db: D1Database,
  tenant: string,
  query: { limit: number; afterName?: string | undefined },
): Promise<{ definitions: DefinitionVersion[]; next?: string }> {
  // With a single MAX(), SQLite takes the other bare columns from the row that holds the maximum.
  const { results } = await db
    .prepare(
      `SELECT name, MAX(version) AS version, hash, created_at FROM definitions
       WHERE tenant = ? AND name > ? GROUP BY name ORDER BY name LIMIT ?`,
    )
    .bind(tenant, query.afterName ?? "", query.limit + 1)
    .all();
  const definitions = results.slice(0, query.limit).map(toVersion);
  const last = definitions.at(-1);
  return results.length > query.limit && last ? { definitions, next: last.name } : { definitions };
}

/**
 * One page of a name's versions, newest first, without their content; `next` (the last version on the page) is set
 * when older ones follow. Read through the primary key, so a name with many versions costs a page, not all of them.
 */
export async function listVersions(
  db: D1Database,
  tenant: string,
  name: string,
  query: { limit: number; beforeVersion?: number | undefined },
): Promise<{ versions: DefinitionVersion[]; next?: number }> {
  const { results } = await db
    .prepare(
      `SELECT name, version, hash, created_at FROM definitions
       WHERE tenant = ? AND name = ? AND version < ? ORDER BY version DESC LIMIT ?`,
    )
    .bind(tenant, name, query.beforeVersion ?? Number.MAX_SAFE_INTEGER, query.limit + 1)
    .all();
  const versions = results.slice(0, query.limit).map(toVersion);
  const last = versions.at(-1);
  return results.length > query.limit && last ? { versions, next: last.version } : { versions };
}
