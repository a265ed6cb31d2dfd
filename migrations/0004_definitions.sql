-- The definitions registry: immutable versions of each tenant's named definitions. The primary key makes a
-- version number unique per name (versions are assigned as MAX + 1 in one statement); the unique hash makes
-- publishing the same content twice answer the version that holds it instead of adding another.
CREATE TABLE IF NOT EXISTS definitions (
  tenant TEXT NOT NULL,
  name TEXT NOT NULL,
  version INTEGER NOT NULL,
  hash TEXT NOT NULL,
  definition_json TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  PRIMARY KEY (tenant, name, version),
  UNIQUE (tenant, name, hash)
);
