import type { ClientResponse } from "hono/client";
import type { SuccessStatusCode } from "hono/utils/http-status";
import { ShepherdApiError } from "./errors";

/** The body of the 2xx answers of a route, from the response union hc infers per status. */
export type SuccessBody<R> = R extends ClientResponse<infer T, infer S, infer _F> ? (S extends SuccessStatusCode ? T : never) : never;

/** The 2xx body, or the API's error thrown as a `ShepherdApiError` (after the retries, which the fetch did). */
export async function unwrap<R extends ClientResponse<unknown, number>>(pending: Promise<R>): Promise<SuccessBody<R>> {
  const response = await pending;
  if (!response.ok) throw await ShepherdApiError.from(response);
  // hc types the body by status; the status was just checked, so this is the success body.
  return (await response.json()) as SuccessBody<R>;
}
