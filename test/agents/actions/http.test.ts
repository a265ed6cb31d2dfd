import { afterEach, describe, expect, it, vi } from "vitest";
import { api, start, uniqueId, waitForStatus } from "../../helpers/api";
import { json, mockRemote, REMOTE } from "../../helpers/remote";
import { FAST } from "../../helpers/policies";

afterEach(() => vi.restoreAllMocks());

const oneStep = (action: Record<string, unknown>) => ({
  name: "http-action",
  onFailure: "fail",
  defaults: FAST,
  steps: [{ id: "call", action: { type: "http", url: `${REMOTE}/start`, ...action } }],
});

describe("the http action", () => {
  it("follows a redirect and checks its target again", async () => {
    const remote = mockRemote((call) =>
      new URL(call.url).pathname === "/start" ? new Response(null, { status: 307, headers: { Location: "/moved" } }) : json({ moved: true }),
    );
    const { id } = await start(oneStep({}));
    const workflow = await waitForStatus(id, "completed");
    expect(workflow.output.call).toEqual({ moved: true });
    expect(remote.calls.map((call) => new URL(call.url).pathname)).toEqual(["/start", "/moved"]);
  });

  it("case 22 (SSRF): refuses a redirect to a target it may not call, without retrying", async () => {
    const remote = mockRemote(() => new Response(null, { status: 302, headers: { Location: "https://user:secret@elsewhere.example/" } }));
    const { id } = await start(oneStep({}));
    const workflow = await waitForStatus(id, "failed");
    expect(workflow.steps[0].error.message).toMatch(/target refused.*userinfo/);
    expect(remote.calls).toHaveLength(1);
  });

  it("sends method, headers and a JSON body, and keeps a non-JSON answer as text", async () => {
    const remote = mockRemote(() => new Response("plain words", { status: 200 }));
    const { id } = await start(oneStep({ method: "PUT", headers: { "X-Api-Key": "k-1" }, body: { n: 1 } }));
    const workflow = await waitForStatus(id, "completed");
    expect(workflow.output.call).toEqual({ text: "plain words" });
    const [call] = remote.calls;
    expect(call?.method).toBe("PUT");
    expect(call?.headers["x-api-key"]).toBe("k-1");
    expect(call?.headers["content-type"]).toBe("application/json");
    expect(call?.body).toEqual({ n: 1 });
  });

  it("refuses an action that gives no type with 400, and starts nothing", async () => {
    const id = uniqueId();
    const refused = await api("POST", "/v1/workflows", { id, definition: { ...oneStep({}), steps: [{ id: "call", action: { url: `${REMOTE}/untyped` } }] } });
    expect(refused.status).toBe(400);
    expect(JSON.stringify(refused.body)).toContain("type");
    expect((await api("GET", `/v1/workflows/${id}`)).status).toBe(404);
  });

  it("case 19 (oversized payload): fails an attempt whose answer is larger than a step output may be, as a transient failure", async () => {
    const huge = "x".repeat(200 * 1024);
    const remote = mockRemote((_call, n) => (n === 1 ? new Response(huge) : json({ small: true })));
    const { id } = await start(oneStep({}));
    const workflow = await waitForStatus(id, "completed");
    expect(workflow.steps[0].attempts[0].error.message).toMatch(/exceeds/);
    expect(remote.calls).toHaveLength(2);
  });
});
