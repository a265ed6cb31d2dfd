// A start's first attempts without the queue hop: the object hands them to an agent host that has room, and sends
// them through the task queue when the host has none. The test configuration turns the hand-off off for the
// front door (START_HAND_OFF "false", so the other tests see first attempts on the queue); here the start RPC asks
// for it as the front door does by default.
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { agentHostShardOf } from "../../src/agents/host-shard";
import { agentHostShards, startHandOff } from "../../src/config";
import { DefinitionSchema } from "../../src/domain/language/definition";
import { planWorkflow } from "../../src/domain/language/plan";
import type { StartRequest } from "../../src/workflow/rpc";
import { api, bearer, historyOf, uniqueId, waitForStatus } from "../helpers/api";
import { gate } from "../helpers/gate";
import { FAST } from "../helpers/policies";
import { watchSends } from "../helpers/queue";
import { httpStep, json, mockRemote } from "../helpers/remote";
import { objectRecord, schedulerStub } from "../helpers/scheduler";
import { backdate, fireAlarm } from "../helpers/time";

afterEach(() => vi.restoreAllMocks());

const definition = { name: "handed-off", defaults: FAST, steps: ["a", "b", "c"].map((id) => httpStep(id)) };

/** The start RPC as the front door makes it when START_HAND_OFF is on. */
function startRequest(id: string, { tenant = "default", name = definition.name } = {}): StartRequest {
  return { tenant, id, plan: planWorkflow(DefinitionSchema.parse({ ...definition, name })), input: null, requestHash: `hash-of-${id}`, handOff: true };
}

/** Workflow ids (of `tenant`) whose step a's attempt `attempt` runs on the same agent host as the probe's first. */
function idsOnOneHost(count: number, tenant = "default", attempt = 1): string[] {
  const shards = agentHostShards(env);
  const ids: string[] = [];
  const target = agentHostShardOf({ tenant: "default", workflowId: "probe", stepId: "a", attempt: 1 }, shards);
  while (ids.length < count) {
    const id = uniqueId("handoff");
    if (agentHostShardOf({ tenant, workflowId: id, stepId: "a", attempt }, shards) === target) ids.push(id);
  }
  return ids;
}

/** Runs `body` with START_HAND_OFF on, the deployment's default: the tests' configuration turns it off so that other files see their attempts queued. */
async function withHandOff(body: () => Promise<void>): Promise<void> {
  const bindings = env as unknown as { START_HAND_OFF?: string };
  bindings.START_HAND_OFF = "true";
  try {
    await body();
  } finally {
    bindings.START_HAND_OFF = "false";
  }
}

describe("a start's hand-off to an agent host", () => {
  it("runs a workflow without a single queue message: the first attempt is claimed from the start, each later one comes back with a report", async () => {
    const remote = mockRemote(() => json({ ok: true }));
    const queue = watchSends();
    const id = uniqueId("handoff");

    expect(await schedulerStub(id).start(startRequest(id))).toMatchObject({ ok: true, created: true });
    const workflow = await waitForStatus(id, "completed");

    expect(queue.of(id)).toEqual([]);
    expect(remote.calls.map((call) => new URL(call.url).pathname)).toEqual(["/a", "/b", "/c"]);
    expect(workflow.steps.map((step: { attempts: unknown[] }) => step.attempts.length)).toEqual([1, 1, 1]);
    expect((await historyOf(id)).filter((event) => event.type === "step_started").map((event) => [event.stepId, event.attempt])).toEqual([["a", 1], ["b", 1], ["c", 1]]);
    // The claim settled the start's task row in its own commit: nothing is left for the alarm to send again.
    expect((await objectRecord(id)).outbox?.filter((row) => row.kind === "task")).toEqual([]);
  });

  it("claims the first attempt in the start's own commit, before the start answers, and hands it over with no claim from the host", async () => {
    const release = gate();
    mockRemote(async () => {
      await release.opened;
      return json({ ok: true });
    });
    const id = uniqueId("handoff");

    expect(await schedulerStub(id).start(startRequest(id))).toMatchObject({ ok: true, created: true, workflow: { steps: [{ id: "a", status: "running" }, {}, {}] } });
    const started = (await historyOf(id)).slice(0, 3).map((event) => [event.type, event.stepId ?? null, event.at]);
    release.open();

    // One commit: the claim (step_started) carries the start's own time, and no second claim follows it.
    expect(started.map(([type, stepId]) => [type, stepId])).toEqual([["workflow_started", null], ["step_scheduled", "a"], ["step_started", "a"]]);
    expect(new Set(started.map(([, , at]) => at)).size).toBe(1);
    await waitForStatus(id, "completed");
    expect((await historyOf(id)).filter((event) => event.type === "step_started" && event.stepId === "a")).toHaveLength(1);
    // The hand-off's outbox row is settled once the host has the attempt.
    expect((await objectRecord(id)).outbox?.filter((row) => row.kind === "handoff")).toEqual([]);
  });

  it("hands the claimed attempt over again from the alarm when the host could not be reached, and the workflow completes", async () => {
    const remote = mockRemote(() => json({ ok: true }));
    const queue = watchSends();
    const id = uniqueId("handoff");
    // The host answers the start's question about room, then cannot be reached for the hand-off itself, once.
    await runInDurableObject(schedulerStub(id), (instance) => {
      const hosts = (instance as unknown as { env: Env }).env.AGENT_HOST;
      const getByName = hosts.getByName.bind(hosts);
      let failed = false;
      vi.spyOn(hosts, "getByName").mockImplementation((name) => {
        const host = getByName(name) as unknown as { reserve(...args: unknown[]): unknown; run(...args: unknown[]): unknown; take(...args: unknown[]): unknown };
        const run = (...args: unknown[]) => (failed ? host.run(...args) : ((failed = true), Promise.reject(new Error("host unreachable"))));
        return { reserve: (...args: unknown[]) => host.reserve(...args), take: (...args: unknown[]) => host.take(...args), run } as never;
      });
    });

    expect(await schedulerStub(id).start(startRequest(id))).toMatchObject({ ok: true, created: true, workflow: { steps: [{ id: "a", status: "running" }, {}, {}] } });
    expect((await objectRecord(id)).outbox?.filter((row) => row.kind === "handoff")).toMatchObject([{ attempts: 1 }]);
    expect(remote.calls).toEqual([]);

    // Past the row's backoff (1 s, jitter 20 %), within the attempt's heartbeat deadline (2 s), the alarm hands the
    // same attempt over.
    await backdate(id, { ms: 1_300 });
    await fireAlarm(id);
    const workflow = await waitForStatus(id, "completed");
    expect(workflow.steps[0].attempts).toHaveLength(1);
    expect((await objectRecord(id)).outbox?.filter((row) => row.kind === "handoff")).toEqual([]);
    expect(queue.of(id)).toEqual([]);
  });

  it("sends the first attempt through the queue when its host has no room, and that workflow completes the same", async () => {
    const release = gate();
    const remote = mockRemote(async () => {
      await release.opened;
      return json({ ok: true });
    });
    const queue = watchSends();
    const [crowd, last] = ((ids) => [ids.slice(0, 16), ids[16]!])(idsOnOneHost(17));

    // Sixteen attempts running on one host (their remote has not answered) fill its room for hand-offs.
    for (const id of crowd) await schedulerStub(id).start(startRequest(id));
    await vi.waitFor(() => expect(remote.calls).toHaveLength(16));
    await schedulerStub(last).start(startRequest(last));

    expect(crowd.flatMap((id) => queue.of(id))).toEqual([]);
    expect(queue.of(last).map((entry) => [entry.message.stepId, entry.message.attempt])).toEqual([["a", 1]]);
    release.open();
    for (const id of [...crowd, last]) {
      const workflow = await waitForStatus(id, "completed");
      expect(workflow.steps.map((step: { attempts: unknown[] }) => step.attempts.length)).toEqual([1, 1, 1]);
    }
    expect(remote.calls).toHaveLength(17 * 3);
  });

  it("takes another tenant's (or workflow name's) first attempt on a host full of one tenant's burst, up to its fair share, instead of queueing it behind that backlog", async () => {
    const release = gate();
    const remote = mockRemote(async () => {
      await release.opened;
      return json({ ok: true });
    });
    const queue = watchSends();
    const crowd = idsOnOneHost(16);
    const [quiet, quietToo, quietThird] = idsOnOneHost(3, "beta");
    const [nightly] = idsOnOneHost(1);
    for (const id of crowd) await schedulerStub(id).start(startRequest(id));
    await vi.waitFor(() => expect(remote.calls).toHaveLength(16));

    for (const id of [quiet!, quietToo!, quietThird!]) await schedulerStub(id, "beta").start(startRequest(id, { tenant: "beta" }));
    await schedulerStub(nightly!).start(startRequest(nightly!, { name: "nightly" }));

    // Beta's first two and the other name's first are handed off; beta's third is past its floor and queues.
    for (const id of [quiet!, quietToo!, nightly!]) expect(queue.of(id)).toEqual([]);
    expect(queue.of(quietThird!).map((entry) => [entry.message.stepId, entry.message.name])).toEqual([["a", "handed-off"]]);
    await vi.waitFor(() => expect(remote.calls).toHaveLength(19));
    release.open();
    for (const id of [quiet!, quietToo!, quietThird!]) {
      await vi.waitFor(async () => expect((await api("GET", `/v1/workflows/${id}`, undefined, { headers: bearer("beta") })).body.status).toBe("completed"), { timeout: 10_000 });
    }
    for (const id of [...crowd, nightly!]) await waitForStatus(id, "completed");
  });

  it("hands the supervisor's retry of a tenant under its fair share to a host, so it does not wait behind the queue's backlog", async () => {
    const remote = mockRemote((call, callsForKey) => (new URL(call.url).pathname === "/a" && callsForKey === 1 ? json({ error: "busy" }, 503) : json({ ok: true })));
    const queue = watchSends();
    const id = uniqueId("handoff");
    // The first attempt's 503 is retried by the alarm after its backoff (20 ms in FAST).
    await withHandOff(async () => {
      // A name of its own: no attempt an earlier test left running counts towards its fair share of a host.
      await schedulerStub(id).start(startRequest(id, { name: "quiet-retry" }));
      await waitForStatus(id, "completed");
    });
    expect(queue.of(id)).toEqual([]);
    expect((await historyOf(id)).filter((event) => event.type === "step_started").map((event) => [event.stepId, event.attempt])).toEqual([["a", 1], ["a", 2], ["b", 1], ["c", 1]]);
    expect(remote.calls).toHaveLength(4);
  });

  it("sends a busy tenant's retry through the queue, where it counts towards back-pressure, even to a host with room", async () => {
    const release = gate();
    const remote = mockRemote(async (call, callsForKey) => {
      if (new URL(call.url).pathname !== "/a") return json({ ok: true });
      if (call.headers["idempotency-key"]?.startsWith(`${retried}:`)) return callsForKey === 1 ? json({ error: "busy" }, 503) : json({ ok: true });
      await release.opened;
      return json({ ok: true });
    });
    const queue = watchSends();
    // Two of the tenant's attempts run on the host the retry's attempt 2 goes to: the tenant's floor there.
    const crowd = idsOnOneHost(2);
    const retried = idsOnOneHost(1, "default", 2)[0]!;
    await withHandOff(async () => {
      for (const id of crowd) await schedulerStub(id).start(startRequest(id));
      await vi.waitFor(() => expect(remote.calls).toHaveLength(2));
      await schedulerStub(retried).start(startRequest(retried));
      await vi.waitFor(() => expect(queue.of(retried).map((entry) => [entry.message.stepId, entry.message.attempt])).toEqual([["a", 2]]));
    });
    release.open();
    await waitForStatus(retried, "completed");
    for (const id of crowd) await waitForStatus(id, "completed");
  });

  it("is what the front door asks for unless START_HAND_OFF is \"false\"", () => {
    expect(startHandOff({} as Env)).toBe(true);
    expect(startHandOff({ START_HAND_OFF: "true" } as Env)).toBe(true);
    expect(startHandOff({ START_HAND_OFF: "false" } as Env)).toBe(false);
    // The tests' own setting: the other test files watch first attempts on the queue.
    expect(startHandOff(env)).toBe(false);
  });
});
