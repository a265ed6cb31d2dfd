/** The name of one schedule's object: by tenant and id, so two tenants can use the same id. */
export function scheduleObjectName(tenant: string, id: string): string {
  return `${tenant}:${id}`;
}
