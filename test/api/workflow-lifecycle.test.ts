import { env, exports } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { api, bearer, historyOf, start, waitForStatus } from "../helpers/api";
import { httpStep, json, mockRemote, REMOTE } from "../helpers/remote";

afterEach(() => vi.restoreAllMocks());

describe("a workflow posted to the API", () => {
  it("runs three sequential steps to completion, feeding outputs forward", async () => {
    const remote = mockRemote((call) => json({ id: `${new URL(call.url).pathname.slice(1)}-result`, got: call.body }));
    const definition = {
      name: "order",
      steps: [
        httpStep("reserve"),
        { id: "charge", action: { type: "http", url: `${REMOTE}/charge`, body: { amount: "{{ input.amount }}", reservation: "{{ steps.reserve.output.id }}", order: "{{ workflow.id }}" } } },
        httpStep("ship"),
      ],
    };
    const { id } = await start(definition, { input: { amount: 42 } });
    const workflow = await waitForStatus(id, "completed");

    expect(workflow.steps.map((s: { status: string }) => s.status)).toEqual(["succeeded", "succeeded", "succeeded"]);
    expect(workflow.output.charge.got).toEqual({ amount: 42, reservation: "reserve-result", order: id });
    expect(remote.calls.map((call) => new URL(call.url).pathname)).toEqual(["/reserve", "/charge", "/ship"]);
    const charge = remote.callsTo("/charge")[0];
    expect(charge?.headers["idempotency-key"]).toBe(`${id}:charge`);
    expect(charge?.headers["shepherd-workflow-id"]).toBe(id);
    expect(charge?.headers["shepherd-step-id"]).toBe("charge");
    expect(charge?.headers["shepherd-attempt"]).toBe("1");
    expect(charge?.headers["shepherd-task-token"]).toMatch(/^[\w-]+\.[\w-]+$/);
    const types = (await historyOf(id)).map((event) => event.type);
    expect(types[0]).toBe("workflow_started");
    expect(types.at(-1)).toBe("workflow_completed");
  });
});

describe("methods the API does not serve", () => {
  it("answers 405 with an Allow header for a known path and the wrong method", async () => {
    const response = await exports.default.fetch("http://shepherd.test/v1/workflows/some-id", { method: "DELETE", headers: bearer() });
    expect(response.status).toBe(405);
    expect(response.headers.get("Allow")).toBe("GET");
    expect(await response.json()).toMatchObject({ error: { code: "method_not_allowed" } });
  });
});

describe("a deployment without its task-token secret", () => {
  it("refuses to start workflows with 503 and stores nothing", async () => {
    vi.spyOn(env, "TASK_TOKEN_SECRET", "get").mockReturnValue("");
    const response = await api("POST", "/v1/workflows", { id: "no-secret", definition: { name: "x", steps: [httpStep("a")] } });
    expect(response.status).toBe(503);
    expect(response.body.error.code).toBe("not_configured");
    expect(response.body.error.message).toContain("wrangler secret put TASK_TOKEN_SECRET");
    vi.restoreAllMocks();
    expect((await api("GET", "/v1/workflows/no-secret")).status).toBe(404);
  });
});
