/**
 * How the rest of Shepherd reaches a bulk job: one object per job, named `<tenant>:<id>`, so another tenant's
 * name for the same id is another (empty) object. The methods are declared here so callers need no import of
 * the object's class.
 */
import type { BulkJobSpec, BulkJobView } from "../domain/bulk/job";

/** What `create` did: stored the job, found the same job already stored, or found another request under the id. */
export type BulkCreation = { outcome: "created" | "existing"; job: BulkJobView } | { outcome: "conflict"; job: BulkJobView };

export interface BulkJobStub {
  create(spec: BulkJobSpec): Promise<BulkCreation>;
  describe(): Promise<BulkJobView | undefined>;
}

export function bulkJobFor(env: Env, tenant: string, id: string): BulkJobStub {
  return env.BULK_JOBS.getByName(`${tenant}:${id}`) as unknown as BulkJobStub;
}
