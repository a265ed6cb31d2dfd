import { afterEach, describe, expect, it, vi } from "vitest";
import { api, bearer, uniqueId } from "../helpers/api";
import { json, mockRemote } from "../helpers/remote";
import { FAST } from "../helpers/policies";

afterEach(() => vi.restoreAllMocks());

// vitest.config.ts limits tenant gamma to allowed.example and its subdomains; other tenants are not limited.
const asGamma = { headers: bearer("gamma") };

function oneStep(url: string) {
  return { name: "allowlist", onFailure: "fail", defaults: FAST, steps: [{ id: "call", action: { type: "http", url } }] };
}

describe("ALLOWED_TARGETS", () => {
  it("refuses at start a target outside the tenant's allowlist, naming the step's url", async () => {
    mockRemote(() => json({ ok: true }));
    const id = uniqueId();
    const response = await api("POST", "/v1/workflows", { id, definition: oneStep("https://remote.example/x") }, asGamma);
    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe("validation_failed");
    expect(response.body.error.details).toContainEqual(
      expect.objectContaining({ path: ["definition", "steps", 0, "action", "url"], message: "host remote.example is not in this tenant's ALLOWED_TARGETS" }),
    );
    expect((await api("GET", `/v1/workflows/${id}`, undefined, asGamma)).status).toBe(404);
  });

  it("accepts listed hosts and does not limit other tenants", async () => {
    const remote = mockRemote(() => json({ ok: true }));
    const mine = uniqueId();
    expect((await api("POST", "/v1/workflows", { id: mine, definition: oneStep("https://eu.allowed.example/x") }, asGamma)).status).toBe(201);
    expect((await api("POST", "/v1/workflows", { id: uniqueId(), definition: oneStep("https://remote.example/x") })).status).toBe(201);
    await vi.waitFor(async () => expect((await api("GET", `/v1/workflows/${mine}`, undefined, asGamma)).body.status).toBe("completed"));
    expect(remote.calls.map((call) => new URL(call.url).host)).toContain("eu.allowed.example");
  });

  it("is checked again by the agent, for a templated URL that could not be checked at start", async () => {
    const remote = mockRemote(() => json({ ok: true }));
    const id = uniqueId();
    const response = await api("POST", "/v1/workflows", { id, definition: oneStep("{{ input.url }}"), input: { url: "https://remote.example/x" } }, asGamma);
    expect(response.status).toBe(201);
    const workflow = await vi.waitFor(async () => {
      const current = (await api("GET", `/v1/workflows/${id}`, undefined, asGamma)).body;
      expect(current.status).toBe("failed");
      return current;
    });
    expect(workflow.steps[0].error.message).toBe("target refused: host remote.example is not in this tenant's ALLOWED_TARGETS");
    expect(remote.calls).toEqual([]);
  });

  it("is checked again on a redirect", async () => {
    const remote = mockRemote((call) =>
      new URL(call.url).host === "allowed.example" ? new Response(null, { status: 302, headers: { Location: "https://remote.example/elsewhere" } }) : json({ ok: true }),
    );
    const id = uniqueId();
    await api("POST", "/v1/workflows", { id, definition: oneStep("https://allowed.example/start") }, asGamma);
    const workflow = await vi.waitFor(async () => {
      const current = (await api("GET", `/v1/workflows/${id}`, undefined, asGamma)).body;
      expect(current.status).toBe("failed");
      return current;
    });
    expect(workflow.steps[0].error.message).toMatch(/ALLOWED_TARGETS/);
    expect(remote.calls.map((call) => new URL(call.url).host)).toEqual(["allowed.example"]);
  });
});
