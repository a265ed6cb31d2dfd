/** What routes read from the request context. */
export type AppEnv = { Bindings: Env; Variables: { tenant: string } };

/** Until API tokens arrive every caller acts for this tenant. */
export const DEFAULT_TENANT = "default";
