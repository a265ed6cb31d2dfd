/**
 * What routes read from the request context: the tenant is the one the caller's API token belongs to, the actor
 * the token's name (its tenant's for a token without one), which operator actions record; `arrivedAt` is when
 * the request reached the Worker, before authentication and rate limiting (a long poll's wait counts from it).
 */
export type AppEnv = { Bindings: Env; Variables: { tenant: string; actor: string; arrivedAt: number } };
