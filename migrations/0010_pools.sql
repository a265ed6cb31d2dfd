-- v1.2: the pools of the user's own workers, per tenant; each pool's tasks live in its own object.
CREATE TABLE pools (
  tenant TEXT NOT NULL,
  name TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  PRIMARY KEY (tenant, name)
);
