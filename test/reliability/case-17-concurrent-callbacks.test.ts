import { runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it, vi, type MockInstance } from "vitest";
import type { WorkflowStore } from "../../src/workflow/store";
import type { WorkflowScheduler } from "../../src/workflow/object";
import { api, historyOf, start, uniqueId, waitForStatus, waitForStep } from "../helpers/api";
import { indexDbOf, indexRow, interceptIndexWrites } from "../helpers/index-db";
import { json, mockRemote, REMOTE, type RemoteCall } from "../helpers/remote";
import { objectRecord, schedulerStub } from "../helpers/scheduler";
import { FAST } from "../helpers/policies";
import { gate } from "../helpers/gate";
import { callTask } from "../helpers/tasks";

afterEach(() => vi.restoreAllMocks());

const HEARTBEATS = 50;
const TERMINAL = ["workflow_completed", "workflow_failed", "workflow_compensated", "workflow_cancelled"];

const waitingJob = (name: string) => ({
  name,
  onFailure: "fail",
  defaults: { ...FAST, timeouts: { ...FAST.timeouts, heartbeatMs: 60_000, startToCloseMs: 60_000 } },
  steps: [{ id: "job", action: { type: "http", url: `${REMOTE}/job` } }],
});

/**
 * Every state version the object persists, in order, from a spy on its store. No lost update means each
 * write is exactly one version past the one before: two transitions never start from the same state.
 */
async function watchVersions(id: string) {
  const versions: number[] = [];
  await runInDurableObject(schedulerStub(id), (instance: WorkflowScheduler) => {
    const store = (instance as unknown as { store: { persist: (state: { version: number }, ...rest: unknown[]) => void } }).store;
    const persist = store.persist.bind(store);
    vi.spyOn(store, "persist").mockImplementation((state, ...rest) => {
      versions.push(state.version);
      persist(state, ...rest);
    });
  });
  return versions;
}

const storedVersion = async (id: string) => (await objectRecord(id)).workflow!.version;

/** The history and stored state after the race: one terminal transition, versions one apart, D1 in step. */
async function expectOneTerminalTransition(id: string, versionBefore: number, versions: number[], heartbeatsApplied: number) {
  const history = await historyOf(id);
  expect(history.filter((event) => TERMINAL.includes(event.type))).toHaveLength(1);
  expect(history.filter((event) => event.type === "step_succeeded" || event.type === "step_failed")).toHaveLength(1);
  expect(history.map((event) => event.seq)).toEqual(history.map((_, i) => history[0]!.seq + i));
  // Monotonic, no lost update: every write one version past the last; one per applied heartbeat, one for the end.
  expect(versions).toEqual(versions.map((_, i) => versionBefore + 1 + i));
  expect(versions).toHaveLength(heartbeatsApplied + 1);
  const version = await storedVersion(id);
  expect(version).toBe(versionBefore + heartbeatsApplied + 1);
  await vi.waitFor(async () => expect((await indexRow(id))?.version).toBe(version));
  return history;
}

const count = (statuses: number[], status: number) => statuses.filter((s) => s === status).length;

describe("case 17: concurrent callbacks", () => {
  it("takes 50 concurrent heartbeats and 10 racing completions on the task routes: one completion wins, the rest are 410, nothing is lost", async () => {
    const remote = mockRemote(() => json({}, 202));
    const { id } = await start(waitingJob("race-routes"));
    await waitForStep(id, "job", "waiting");
    const token = remote.calls[0]!.headers["shepherd-task-token"]!;
    const versionBefore = await storedVersion(id);
    const versions = await watchVersions(id);

    const heartbeats = Array.from({ length: HEARTBEATS }, (_, beat) => callTask(token, "heartbeat", { progress: { beat } }));
    const completions = Array.from({ length: 10 }, (_, by) => callTask(token, "complete", { output: { by } }));
    const responses = await Promise.all([...heartbeats, ...completions]);

    const beatStatuses = responses.slice(0, HEARTBEATS).map((response) => response.status);
    const completeStatuses = responses.slice(HEARTBEATS).map((response) => response.status);
    expect(beatStatuses.every((status) => status === 200 || status === 410)).toBe(true);
    expect(responses.slice(0, HEARTBEATS).filter((r) => r.status === 200).every((r) => r.body.cancelRequested === false)).toBe(true);
    expect(count(completeStatuses, 200)).toBe(1);
    expect(count(completeStatuses, 410)).toBe(9);

    const workflow = await waitForStatus(id, "completed");
    const winner = completeStatuses.indexOf(200);
    expect(workflow.output).toEqual({ job: { by: winner } });
    const history = await expectOneTerminalTransition(id, versionBefore, versions, count(beatStatuses, 200));
    expect(history.filter((event) => event.type === "workflow_completed")).toHaveLength(1);
    // The progress kept is one that was sent: the last heartbeat applied before the completion.
    if (count(beatStatuses, 200) > 0) expect(workflow.steps[0].progress).toEqual({ beat: expect.any(Number) });
  });

  it("takes 50 heartbeats and racing success and failure reports on the object's RPCs: exactly one report ends the step", async () => {
    const remote = mockRemote(() => json({}, 202));
    const { id } = await start(waitingJob("race-rpc"));
    await waitForStep(id, "job", "waiting");
    expect(remote.calls).toHaveLength(1);
    const versionBefore = await storedVersion(id);
    const versions = await watchVersions(id);
    const stub = schedulerStub(id);

    const heartbeats = Array.from({ length: HEARTBEATS }, (_, beat) => stub.heartbeat("job", 1, { value: { beat } }));
    const reports = Array.from({ length: 10 }, (_, i) =>
      i % 2 === 0
        ? stub.report("job", 1, { type: "succeeded", output: { by: i } })
        : stub.report("job", 1, { type: "failed", error: { message: `failed by ${i}`, retryable: false } }),
    );
    const [beatReplies, reportReplies] = await Promise.all([Promise.all(heartbeats), Promise.all(reports)]);

    expect(reportReplies.filter((reply) => reply.ok)).toHaveLength(1);
    expect(reportReplies.filter((reply) => !reply.ok).every((reply) => "code" in reply && reply.code === "gone")).toBe(true);
    const applied = beatReplies.filter((reply) => reply.ok).length;
    expect(beatReplies.filter((reply) => !reply.ok).every((reply) => "code" in reply && reply.code === "gone")).toBe(true);

    const winner = reportReplies.findIndex((reply) => reply.ok);
    const workflow = (await api("GET", `/v1/workflows/${id}`)).body;
    expect(workflow.status).toBe(winner % 2 === 0 ? "completed" : "failed");
    const history = await expectOneTerminalTransition(id, versionBefore, versions, applied);
    expect(history.filter((event) => event.type === "workflow_completed")).toHaveLength(winner % 2 === 0 ? 1 : 0);
  });

  it("lets a remote heartbeat and complete on its token while the agent's fetch to it is still awaited: the agent's late report changes nothing", async () => {
    const during: { status: number }[] = [];
    const remote = mockRemote(async (call: RemoteCall) => {
      // The remote does the work inside the agent's request: 50 heartbeats and its completion, all at once.
      const token = call.headers["shepherd-task-token"]!;
      const calls = [
        ...Array.from({ length: HEARTBEATS }, (_, beat) => callTask(token, "heartbeat", { progress: { beat } })),
        callTask(token, "complete", { output: { by: "remote" } }),
      ];
      during.push(...(await Promise.all(calls)));
      return json({ by: "agent" });
    });
    const id = uniqueId();
    // Versions counted from the first write on: start (1), claim (2), then the race.
    const versions = await watchVersions(id);
    await start({ ...waitingJob("race-fetch") }, { id });

    const workflow = await waitForStatus(id, "completed");
    await vi.waitFor(() => expect(during).toHaveLength(HEARTBEATS + 1));
    expect(during.at(-1)!.status).toBe(200);
    // The remote's own completion won; the agent's report of the same attempt came after the end.
    expect(workflow.output).toEqual({ job: { by: "remote" } });
    expect(remote.calls).toHaveLength(1);
    const applied = count(during.slice(0, HEARTBEATS).map((r) => r.status), 200);
    expect(versions.slice(0, 2)).toEqual([1, 2]);
    await expectOneTerminalTransition(id, 2, versions.slice(2), applied);
    expect((await historyOf(id)).filter((event) => event.type === "workflow_completed")).toHaveLength(1);
  });

  it("runs 60 callbacks while the winning completion's commit awaits a fetch inside the object: each sees the completed state, none undoes it", async () => {
    const held = gate();
    const remote = mockRemote(async (call) => {
      if (new URL(call.url).pathname === "/d1-latency") await held.opened;
      return json({}, 202);
    });
    const { id } = await start(waitingJob("race-awaited"));
    await waitForStep(id, "job", "waiting");
    const token = remote.calls[0]!.headers["shepherd-task-token"]!;
    const versionBefore = await storedVersion(id);
    const versions = await watchVersions(id);
    // How many calls have made their transition in the object: each records it with one persist, or one
    // appendHistory when nothing changed, in the same synchronous turn as it loaded the state.
    const records: MockInstance[] = [];
    await runInDurableObject(schedulerStub(id), (instance: WorkflowScheduler) => {
      const store = (instance as unknown as { store: WorkflowStore }).store;
      records.push(vi.spyOn(store, "persist"), vi.spyOn(store, "appendHistory"));
    });
    const begun = () => records.reduce((calls, spy) => calls + spy.mock.calls.length, 0);
    // The completion's index write awaits a fetch first: the object yields mid-commit, after persisting.
    interceptIndexWrites(indexDbOf(id), (values, bound) => {
      if (values[1] !== id || values[3] !== "completed") return bound;
      return { run: async () => (await fetch(`${REMOTE}/d1-latency`), bound.run()) };
    });

    const completion = callTask(token, "complete", { output: { by: "first" } });
    await vi.waitFor(() => expect(remote.callsTo("/d1-latency")).toHaveLength(1));
    expect(begun()).toBe(1);
    const racing = Promise.all([
      ...Array.from({ length: HEARTBEATS }, (_, beat) => callTask(token, "heartbeat", { progress: { beat } })),
      ...Array.from({ length: 5 }, () => callTask(token, "complete", { output: { by: "late" } })),
      ...Array.from({ length: 5 }, () => callTask(token, "fail", { error: { message: "late", retryable: false } })),
    ]);
    // All 60 run their transition while the completion is still suspended in its fetch: the input gate is open
    // across it, so this is where a lost update would happen if state lived anywhere but the committed store.
    await vi.waitFor(() => expect(begun()).toBe(1 + HEARTBEATS + 10));
    held.open();

    expect(await completion).toEqual({ status: 200, body: { ok: true } });
    expect((await racing).map((response) => response.status)).toEqual(Array.from({ length: HEARTBEATS + 10 }, () => 410));
    const workflow = await waitForStatus(id, "completed");
    expect(workflow.output).toEqual({ job: { by: "first" } });
    await expectOneTerminalTransition(id, versionBefore, versions, 0);
  });
});
