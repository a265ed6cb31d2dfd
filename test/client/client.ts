// The typed client as a caller holds it, pointed at the Worker's own fetch handler.
import { exports } from "cloudflare:workers";
import { vi } from "vitest";
import { createShepherdClient, type ShepherdClient, type ShepherdClientOptions } from "../../src/client";
import { TOKENS } from "../helpers/api";
import { REMOTE } from "../helpers/remote";

export const BASE_URL = "http://shepherd.test";

export const workerFetch: NonNullable<ShepherdClientOptions["fetch"]> = (input, init) => exports.default.fetch(input, init);

export function clientFor(options: Partial<ShepherdClientOptions> = {}): ShepherdClient {
  return createShepherdClient({ url: BASE_URL, token: TOKENS.default, fetch: workerFetch, ...options });
}

/** Polls `get` until the workflow has the status: the work runs through the real queue and agents. */
export function untilStatus(client: ShepherdClient, id: string, status: string, timeout = 10_000) {
  return vi.waitFor(
    async () => {
      const workflow = await client.get(id);
      if (workflow.status !== status) throw new Error(`workflow ${id} is ${workflow.status}, not yet ${status}`);
      return workflow;
    },
    { timeout, interval: 20 },
  );
}

/** A step calling the fake remote at `/<id>`, typed as the API's step (the shared `httpStep` is untyped JSON). */
export function remoteStep(id: string, options: { compensateAt?: string } = {}) {
  const call = (path: string) => ({ type: "http" as const, url: `${REMOTE}/${path}` });
  return { id, action: call(id), ...(options.compensateAt === undefined ? {} : { compensate: call(options.compensateAt) }) };
}
