import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { tellEveryAgentHost } from "../../src/agents/agent-host";
import { agentHostFor, agentHostShardOf } from "../../src/agents/host-shard";
import { agentHostShards, DEFAULT_AGENT_HOST_SHARDS } from "../../src/config";

const step = { tenant: "default", workflowId: "wf-shards", stepId: "charge" };

afterEach(() => vi.restoreAllMocks());

describe("AGENT_HOST_SHARDS", () => {
  it.each([
    [undefined, DEFAULT_AGENT_HOST_SHARDS],
    ["1", 1],
    ["256", 256],
    ["10000", 10_000],
    ["0", DEFAULT_AGENT_HOST_SHARDS],
    ["10001", DEFAULT_AGENT_HOST_SHARDS],
    ["2.5", DEFAULT_AGENT_HOST_SHARDS],
    ["many", DEFAULT_AGENT_HOST_SHARDS],
    ["", DEFAULT_AGENT_HOST_SHARDS],
  ])("%s → %i hosts", (raw, expected) => {
    expect(agentHostShards({ ...env, AGENT_HOST_SHARDS: raw })).toBe(expected);
  });

  it("names the host a message goes to from the configured count", () => {
    const names: string[] = [];
    const getByName = env.AGENT_HOST.getByName.bind(env.AGENT_HOST);
    vi.spyOn(env.AGENT_HOST, "getByName").mockImplementation((name: string) => (names.push(name), getByName(name)));
    const configured = { ...env, AGENT_HOST_SHARDS: "3" };
    for (let attempt = 1; attempt <= 6; attempt++) agentHostFor(configured, { ...step, attempt, kind: "action" } as never);
    expect(new Set(names).size).toBe(3);
    for (const name of names) expect(name).toMatch(/^agents-[0-2]$/);
  });

  it("tells each of the configured hosts about a breaker, once", async () => {
    const names: string[] = [];
    const getByName = env.AGENT_HOST.getByName.bind(env.AGENT_HOST);
    vi.spyOn(env.AGENT_HOST, "getByName").mockImplementation((name: string) => (names.push(name), getByName(name)));
    await tellEveryAgentHost({ ...env, AGENT_HOST_SHARDS: "5" }, { tenant: "default", host: "example.test", state: "closed" } as never);
    expect(names.sort()).toEqual(["agents-0", "agents-1", "agents-2", "agents-3", "agents-4"]);
  });
});

describe("which host runs an attempt", () => {
  it("a retry never runs on the host that ran the attempt before it", () => {
    for (const shards of [2, 3, 64]) {
      for (let attempt = 1; attempt < 10; attempt++) {
        expect(agentHostShardOf({ ...step, attempt: attempt + 1 }, shards)).not.toBe(agentHostShardOf({ ...step, attempt }, shards));
      }
    }
  });

  it("the same attempt always goes to the same host (a message delivered twice meets the same host)", () => {
    expect(agentHostShardOf({ ...step, attempt: 2 }, 64)).toBe(agentHostShardOf({ ...step, attempt: 2 }, 64));
  });

  it("one host takes everything when there is one", () => {
    for (let attempt = 1; attempt <= 5; attempt++) expect(agentHostShardOf({ ...step, attempt }, 1)).toBe(0);
  });

  it("spreads steps over the hosts", () => {
    const used = new Set(Array.from({ length: 500 }, (_, n) => agentHostShardOf({ ...step, workflowId: `wf-${n}`, attempt: 1 }, 64)));
    expect(used.size).toBeGreaterThan(56);
  });
});
