/** What routes read from the request context: the tenant is the one the caller's API token belongs to. */
export type AppEnv = { Bindings: Env; Variables: { tenant: string } };
