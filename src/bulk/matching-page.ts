/** A bulk job's filter as a page of the cross-workflow index (the list route's own query, over the tenant's shards). */
import { BULK_PAGE_SIZE } from "../domain/bulk/pace";
import type { BulkJobSpec } from "../domain/bulk/job";
import type { ListPosition } from "../workflow-index/d1-index";
import { tenantIndexDbs } from "../workflow-index/index-shards";
import { listTenantWorkflows } from "../workflow-index/tenant-listing";

export interface MatchingPage {
  workflowIds: string[];
  /** Where the next page starts; undefined after the last. */
  next?: ListPosition;
}

/**
 * The next page of the job's matches, newest first, past `after`. Only workflows created by the time the job was
 * are matched: the pages walk back from the newest, so one started while the job runs would be missed or not
 * depending on timing; this way the set is the same whenever the pages are read, a restart included.
 */
export async function nextMatchingPage(env: Env, spec: BulkJobSpec, after: ListPosition | undefined): Promise<MatchingPage> {
  const { status, name, parentId, createdAfter, createdBefore, ids, idPrefix } = spec.filter;
  const before = Math.min(createdBefore ?? Number.MAX_SAFE_INTEGER, spec.createdAt + 1);
  const page = await listTenantWorkflows(tenantIndexDbs(env, spec.tenant), spec.tenant, {
    status, name, parentId, createdAfter, createdBefore: before, ids, idPrefix, limit: BULK_PAGE_SIZE, after,
  });
  return { workflowIds: page.workflows.map((workflow) => workflow.id), ...(page.next ? { next: page.next } : {}) };
}
