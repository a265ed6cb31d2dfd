import { env, exports } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { api, bearer, start, uniqueId, waitForStatus } from "../helpers/api";
import { json, mockRemote, REMOTE } from "../helpers/remote";
import { FAST } from "../helpers/policies";

afterEach(() => vi.restoreAllMocks());

const RESET = { message: "Durable Object reset because its code was updated.", flags: { retryable: true } };
const OVERLOADED = { message: "Durable Object is overloaded. Too many requests queued.", flags: { retryable: false, overloaded: true } };

/**
 * The platform's stub errors, thrown by the first `times` stubs handed out for `method`; later stubs are real.
 * Only the binding is wrapped: everything of ours runs as in production.
 */
function failStubs(method: string, error: { message: string; flags: Record<string, boolean> }, times = 1) {
  const namespace = env.WORKFLOW_SCHEDULER;
  const getByName = namespace.getByName.bind(namespace);
  let failed = 0;
  const spy = vi.spyOn(namespace, "getByName").mockImplementation((name: string) => {
    const stub = getByName(name);
    if (failed >= times) return stub;
    return new Proxy(stub, {
      get(target, property) {
        if (property !== method) return Reflect.get(target, property);
        return async () => {
          failed += 1;
          throw Object.assign(new Error(error.message), error.flags);
        };
      },
    });
  });
  return { spy, failed: () => failed };
}

async function runningWorkflow() {
  mockRemote(() => json({}, 202));
  const id = uniqueId();
  await start({ name: "rpc", defaults: { ...FAST, timeouts: { ...FAST.timeouts, heartbeatMs: 60_000, startToCloseMs: 60_000 } }, steps: [{ id: "only", action: { type: "http", url: `${REMOTE}/only` } }] }, { id });
  await vi.waitFor(async () => expect((await api("GET", `/v1/workflows/${id}`)).body.steps[0].status).toBe("waiting"));
  return id;
}

describe("case 14: deploy reset / overload on RPC", () => {
  it("retries an idempotent call on a fresh stub after a reset, and the caller never sees it", async () => {
    const id = await runningWorkflow();
    const stubs = failStubs("describe", RESET);
    const response = await api("GET", `/v1/workflows/${id}`);
    expect(response.status).toBe(200);
    expect(response.body.id).toBe(id);
    expect(stubs.failed()).toBe(1);
    expect(stubs.spy).toHaveBeenCalledTimes(2);
  });

  it("answers an overloaded object with 503 and Retry-After, without retrying it", async () => {
    const id = await runningWorkflow();
    const stubs = failStubs("describe", OVERLOADED);
    const response = await exports.default.fetch(`http://shepherd.test/v1/workflows/${id}`, { headers: bearer() });
    expect(response.status).toBe(503);
    expect(response.headers.get("Retry-After")).toBe("1");
    expect(await response.json()).toMatchObject({ error: { code: "overloaded" } });
    expect(stubs.spy).toHaveBeenCalledTimes(1);
  });

  it("does not retry an operator action after a reset: 503 with Retry-After, nothing changed, and the client's retry works", async () => {
    const id = await runningWorkflow();
    // Every operator command is the object's one `command` method; cancel's row says it is sent once.
    const stubs = failStubs("command", RESET);
    const first = await api("POST", `/v1/workflows/${id}/cancel`);
    expect(first.status).toBe(503);
    expect(first.body.error.code).toBe("unavailable");
    expect(stubs.spy).toHaveBeenCalledTimes(1);
    expect((await api("GET", `/v1/workflows/${id}`)).body.status).toBe("running");
    expect((await api("POST", `/v1/workflows/${id}/cancel`)).status).toBe(202);
    await waitForStatus(id, "cancelled");
  });

  it("retries a pause after a reset, as its row of the commands' table says: pausing twice changes nothing", async () => {
    const id = await runningWorkflow();
    const stubs = failStubs("command", RESET);
    const response = await api("POST", `/v1/workflows/${id}/pause`);
    expect(response.status).toBe(202);
    expect(response.body.status).toBe("paused");
    expect(stubs.failed()).toBe(1);
  });

  it("gives up after three resets in a row with a 503, not a 500", async () => {
    const id = await runningWorkflow();
    const stubs = failStubs("describe", RESET, 10);
    const response = await api("GET", `/v1/workflows/${id}`);
    expect(response.status).toBe(503);
    expect(stubs.failed()).toBe(3);
  });

  it("retries the agent's claim after a reset: the step runs once", async () => {
    const remote = mockRemote(() => json({ ok: true }));
    const stubs = failStubs("claim", RESET);
    const id = uniqueId();
    await start({ name: "rpc", defaults: FAST, steps: [{ id: "only", action: { type: "http", url: `${REMOTE}/only` } }] }, { id });
    const workflow = await waitForStatus(id, "completed");
    expect(stubs.failed()).toBe(1);
    expect(workflow.steps[0].attempts).toHaveLength(1);
    expect(remote.requestsFor(`${id}:only`)).toBe(1);
  });
});
