import { createShepherdClient, type ShepherdClient } from "../client/index";
import { stringFlag, type FlagValues } from "./command";
import { UnreachableError, UsageError } from "./failures";

/** Where `npm start` serves. */
const DEFAULT_URL = "http://localhost:8787";
/** One try's wait for an answer; the client's retries of 429 and 503 come on top. */
const REQUEST_TIMEOUT_MS = 30_000;

export interface Connection {
  url: string;
  token: string;
}

/** --url and --token, else SHEPHERD_URL and SHEPHERD_TOKEN; a token is required, the URL has a default. */
export function connectionFrom(flags: FlagValues, env: Record<string, string | undefined>, usage: string): Connection {
  const url = stringFlag(flags, "url") ?? nonEmpty(env.SHEPHERD_URL) ?? DEFAULT_URL;
  const token = stringFlag(flags, "token") ?? nonEmpty(env.SHEPHERD_TOKEN);
  if (token === undefined || token === "") throw new UsageError("no API token: pass --token <token> or set SHEPHERD_TOKEN", usage);
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new UsageError(`--url must be a URL such as ${DEFAULT_URL} (got "${url}")`, usage);
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") throw new UsageError(`--url must be http or https (got "${url}")`, usage);
  return { url: url.replace(/\/+$/, ""), token };
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === "" ? undefined : value;
}

/**
 * The typed client, with a fetch that gives up on a silent service and says so as an UnreachableError: a failure
 * of the connection is exit 3, told apart from the API's own answers (ShepherdApiError) where it happens.
 */
export function clientFor(connection: Connection): ShepherdClient {
  return createShepherdClient({
    url: connection.url,
    token: connection.token,
    fetch: async (input, init) => {
      // The caller's own signal (a worker's poll, abandoned when it stops) still aborts the request.
      const callers = [init?.signal ?? (input instanceof Request ? input.signal : undefined)].filter((signal) => signal != null);
      try {
        return await fetch(input, { ...init, signal: AbortSignal.any([...callers, AbortSignal.timeout(REQUEST_TIMEOUT_MS)]) });
      } catch (error) {
        throw new UnreachableError(connection.url, error);
      }
    },
  });
}
