import { applyD1Migrations } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { indexDatabaseBinding } from "../../src/config";

// Setup files run before each test file (storage is isolated per test file).
// applyD1Migrations() only applies migrations that have not been applied yet.
// Every bound index database (DB, DB_1 ...) gets them, as `npm start` applies them.
for (let shard = 0, db = indexDatabaseBinding(env, 0); db !== undefined; db = indexDatabaseBinding(env, ++shard)) {
  await applyD1Migrations(db, env.TEST_MIGRATIONS);
}
