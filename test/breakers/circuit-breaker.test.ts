import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { knownBreaker, learnBreaker } from "../../src/agents/breaker-guard";
import { RELEASE } from "../../src/domain/breaker/machine";
import { DEFAULT_BREAKER } from "../../src/domain/breaker/settings";
import { json } from "../helpers/remote";
import {
  breakerStub,
  callingHost,
  endOpenPeriod,
  eventsOf,
  remoteWithHealth,
  startAs,
  storedBreaker,
  targetsOf,
  uniqueHost,
  waitForEvents,
  waitForTarget,
  waitForWorkflow,
  workflowOf,
} from "./breakers";

afterEach(() => vi.restoreAllMocks());

/**
 * Opens the breaker of `host` for tenant "default": one workflow whose step fails 503 five times in a row (the
 * default threshold). Its sixth attempt finds the breaker open and is parked. Returns that workflow's id.
 */
async function openBreaker(host: string): Promise<string> {
  const opener = await startAs("default", callingHost(host, { maxAttempts: 10, name: "opener" }));
  await waitForEvents("default", opener, "step_parked");
  return opener;
}

/** Starts a workflow of `tenant` calling `host` and waits until its step is parked. */
async function parkedWorkflow(host: string, tenant: "default" | "beta" = "default"): Promise<string> {
  const id = await startAs(tenant, callingHost(host, { name: "parked" }));
  await waitForEvents(tenant, id, "step_parked");
  return id;
}

describe("a host that fails five times in a row", () => {
  it("opens its breaker: circuit_opened in the history of the workflow whose failure opened it, and GET /v1/targets shows it open", async () => {
    const { callsTo } = remoteWithHealth();
    const host = uniqueHost();
    const opener = await openBreaker(host);

    const [opened] = await eventsOf("default", opener, "circuit_opened");
    expect(opened).toMatchObject({ stepId: "call-1", attempt: 5, data: { host, failures: 5 } });
    expect(opened!.data.openUntil - opened!.at).toBeGreaterThan(DEFAULT_BREAKER.openMs - 1_000);
    expect(opened!.data.openUntil - opened!.at).toBeLessThanOrEqual(DEFAULT_BREAKER.openMs);
    // Recorded before the failure it came with.
    const history = (await eventsOf("default", opener, "step_failed")).filter((event) => event.attempt === 5);
    expect(history[0]!.at).toBeGreaterThanOrEqual(opened!.at);
    // Five requests reached the host; the sixth attempt was parked without one.
    expect(callsTo(host)).toBe(5);
    const target = await waitForTarget("default", host, { state: "open", failures: 5, openUntil: opened!.data.openUntil });
    expect(target.openUntil).toBe(opened!.data.openUntil);
    await waitForTarget("default", host, { parked: 1 });
    // Another tenant's list does not show it.
    expect((await targetsOf("beta")).map((row) => row.host)).not.toContain(host);
  });
});

describe("while a breaker is open", () => {
  it("parks the attempts of the tenant's other workflows for that host: no request, step_parked, the step retrying, no attempt used", async () => {
    const { health, callsTo } = remoteWithHealth();
    const host = uniqueHost();
    await openBreaker(host);
    const calls = callsTo(host);

    const other = await parkedWorkflow(host);

    expect(callsTo(host)).toBe(calls);
    const [parked] = await eventsOf("default", other, "step_parked");
    expect(parked).toMatchObject({ stepId: "call-1", attempt: 1, data: { host, kind: "action" } });
    const workflow = await workflowOf("default", other);
    expect(workflow.status).toBe("running");
    expect(workflow.steps[0]).toMatchObject({ status: "retrying", parked: { host }, attempts: [{ n: 1, status: "cancelled", error: { message: `circuit open for ${host}` } }] });
    await waitForTarget("default", host, { state: "open", parked: 2 });

    // Budget intact: released, it still gets all three attempts of its policy (two more 503s, then a success).
    let answered = 0;
    health.answers.set(other, () => (++answered <= 2 ? json({ error: "unavailable" }, 503) : json({ ok: true })));
    health.down = false;
    await endOpenPeriod("default", host);
    const done = await waitForWorkflow("default", other, "completed");
    expect(done.steps[0].attempts.map((attempt: { status: string }) => attempt.status)).toEqual(["cancelled", "failed", "failed", "succeeded"]);
  });

  it("leaves another tenant's workflows calling the same host alone", async () => {
    const { health, callsTo } = remoteWithHealth();
    const host = uniqueHost();
    await openBreaker(host);
    const calls = callsTo(host);

    const theirs = await startAs("beta", callingHost(host, { name: "other-tenant" }));
    health.answers.set(theirs, () => json({ ok: true }));
    await waitForWorkflow("beta", theirs, "completed");

    expect(callsTo(host)).toBe(calls + 1);
    expect(await eventsOf("beta", theirs, "step_parked")).toEqual([]);
    expect((await targetsOf("beta")).map((row) => row.host)).not.toContain(host);
  });
});

describe("at the end of the open period", () => {
  it("sends one probe; its success closes the breaker, and the parked steps are released and complete", async () => {
    const { health, callsTo } = remoteWithHealth();
    const host = uniqueHost();
    const opener = await openBreaker(host);
    const others = [await parkedWorkflow(host), await parkedWorkflow(host)];
    const calls = callsTo(host);
    health.down = false;

    await endOpenPeriod("default", host);

    // The longest-parked step (the opener's) is the probe: one request, then the breaker closes.
    await waitForWorkflow("default", opener, "completed");
    for (const id of others) await waitForWorkflow("default", id, "completed");
    expect(callsTo(host)).toBe(calls + 3);
    for (const id of [opener, ...others]) {
      const [closed] = await eventsOf("default", id, "circuit_closed");
      expect(closed).toMatchObject({ stepId: "call-1", data: { host } });
      expect(closed!.data.parkedMs).toBeGreaterThanOrEqual(0);
    }
    const [probeRelease] = await eventsOf("default", opener, "circuit_closed");
    for (const id of others) expect((await eventsOf("default", id, "circuit_closed"))[0]!.at).toBeGreaterThanOrEqual(probeRelease!.at);
    await waitForTarget("default", host, { state: "closed", failures: 0, parked: 0 });
    expect((await targetsOf("default")).find((row) => row.host === host)?.openUntil).toBeUndefined();
    expect((await storedBreaker("default", host)).parked).toEqual([]);
  });

  it("closes when the probe succeeds in an isolate that knows nothing of the breaker (a restart since it opened)", async () => {
    const { health } = remoteWithHealth();
    const host = uniqueHost();
    const opener = await openBreaker(host);
    health.down = false;
    // What a restarted runtime's agents know of the breaker: nothing (learning "closed" makes this isolate forget it).
    learnBreaker({ tenant: "default", host, state: "closed", failures: 0 });
    expect(knownBreaker("default", host)).toBeUndefined();

    await endOpenPeriod("default", host);

    await waitForWorkflow("default", opener, "completed");
    await waitForTarget("default", host, { state: "closed", failures: 0, parked: 0 });
  });

  it("re-opens the breaker for twice as long when the probe fails, and parks the probe's step again", async () => {
    const { callsTo } = remoteWithHealth();
    const host = uniqueHost();
    const opener = await openBreaker(host);
    const other = await parkedWorkflow(host);
    const calls = callsTo(host);

    await endOpenPeriod("default", host);

    const [, reopened] = await waitForEvents("default", opener, "circuit_opened", 2);
    expect(reopened).toMatchObject({ attempt: 7, data: { host, failures: 6 } });
    expect(reopened!.data.openUntil - reopened!.at).toBeGreaterThan(2 * DEFAULT_BREAKER.openMs - 1_000);
    expect(reopened!.data.openUntil - reopened!.at).toBeLessThanOrEqual(2 * DEFAULT_BREAKER.openMs);
    expect((await storedBreaker("default", host)).breaker).toMatchObject({ state: "open", openMs: 2 * DEFAULT_BREAKER.openMs });
    // The one probe reached the host; the other parked step stayed parked; the probe's step is parked again.
    expect(callsTo(host)).toBe(calls + 1);
    await waitForEvents("default", opener, "step_parked", 2);
    expect(await eventsOf("default", other, "circuit_closed")).toEqual([]);
    await waitForTarget("default", host, { state: "open", failures: 6, openUntil: reopened!.data.openUntil });
  });

  it("releases the parked steps at a bounded rate after the probe closes the breaker: ten at once, the rest a second later", async () => {
    const { health } = remoteWithHealth();
    const host = uniqueHost();
    const opener = await openBreaker(host);
    const others: string[] = [];
    for (let i = 0; i < RELEASE.first + 1; i++) others.push(await parkedWorkflow(host));
    health.down = false;

    await endOpenPeriod("default", host);

    await waitForWorkflow("default", opener, "completed");
    for (const id of others) await waitForWorkflow("default", id, "completed");
    const releasedAt = (await Promise.all(others.map(async (id) => (await eventsOf("default", id, "circuit_closed"))[0]!.at))).sort((a, b) => a - b);
    // The eleventh waited for the next second's batch; the first ten went together.
    expect(releasedAt[RELEASE.first]! - releasedAt[0]!).toBeGreaterThanOrEqual(RELEASE.everyMs - 100);
    expect(releasedAt[RELEASE.first]! - releasedAt[RELEASE.first - 1]!).toBeGreaterThan(releasedAt[RELEASE.first - 1]! - releasedAt[0]!);
  });
});

describe("the hot path", () => {
  it("runs a workflow of several steps against a healthy host with no call to any breaker", async () => {
    const { health } = remoteWithHealth();
    health.down = false;
    const host = uniqueHost();
    const breakers = vi.spyOn(env.BREAKERS, "getByName");

    const id = await startAs("default", callingHost(host, { name: "healthy", steps: 3 }));
    await waitForWorkflow("default", id, "completed");

    expect(breakers).not.toHaveBeenCalled();
    expect((await targetsOf("default")).map((row) => row.host)).not.toContain(host);
  });
});

describe("agents that never saw a failure of the host", () => {
  it("learn from the breaker when it opens and when it closes", async () => {
    remoteWithHealth();
    const host = uniqueHost();
    const call = { tenant: "default", host, settings: { failures: 1, openMs: 30_000 }, workflowId: "elsewhere", stepId: "s", attempt: 1 };

    // As another isolate's agent would: its reply reaches only that agent; everyone else hears from the breaker.
    const opened = await breakerStub("default", host).recordFailure(call);
    expect(opened).toMatchObject({ state: "open", openedNow: true });
    await vi.waitFor(() => expect(knownBreaker("default", host)).toMatchObject({ state: "open", openUntil: opened.openUntil }), { timeout: 5_000, interval: 10 });

    await breakerStub("default", host).recordSuccess(call);
    await vi.waitFor(() => expect(knownBreaker("default", host)).toBeUndefined(), { timeout: 5_000, interval: 10 });
  });
});
