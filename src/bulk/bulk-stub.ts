/**
 * How the rest of Shepherd reaches a bulk job: one object per job, named `<tenant>:<id>`, so another tenant's
 * name for the same id is another (empty) object. The methods are declared here so callers need no import of
 * the object's class.
 */
import type { BulkJobSpec, BulkJobView } from "../domain/bulk/job";

export interface BulkJobStub {
  create(spec: BulkJobSpec): Promise<BulkJobView>;
  describe(): Promise<BulkJobView | undefined>;
}

export function bulkJobFor(env: Env, tenant: string, id: string): BulkJobStub {
  return env.BULK_JOBS.getByName(`${tenant}:${id}`) as unknown as BulkJobStub;
}
