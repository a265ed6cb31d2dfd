import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { DefinitionSchema } from "../../src/domain/language/definition";
import { planWorkflow } from "../../src/domain/language/plan";
import { clearInjectedFaults, injectFault, timesFired } from "../../src/dev/faults";
import { SEND_LEASE_MS } from "../../src/workflow/delivery-policy";
import type { StartRequest } from "../../src/workflow/rpc";
import { api, historyOf, uniqueId, waitForStatus } from "../helpers/api";
import { indexRow } from "../helpers/index-db";
import { json, mockRemote, REMOTE } from "../helpers/remote";
import { taskQueueOf, watchSends } from "../helpers/queue";
import { objectRecord, schedulerStub } from "../helpers/scheduler";
import { FAST } from "../helpers/policies";
import { callTask } from "../helpers/tasks";
import { backdate, fireAlarm } from "../helpers/time";

afterEach(() => {
  clearInjectedFaults();
  vi.restoreAllMocks();
});

const CRASH = "injected fault: abortAfterPersist";
/** A tick that fails runs again this much later (the guard in src/workflow/alarm.ts). */
const TICK_RERUN_MS = 1_000;

const definition = (scheduleToStartMs: number | undefined, steps = ["a"]) => ({
  name: "crash",
  defaults: { retry: FAST.retry, timeouts: { startToCloseMs: 60_000, heartbeatMs: 60_000, ...(scheduleToStartMs === undefined ? {} : { scheduleToStartMs }) } },
  steps: steps.map((id) => ({ id, action: { type: "http", url: `${REMOTE}/${id}` } })),
});

/** The start RPC exactly as the front door makes it. */
function startRequest(id: string, def: unknown): StartRequest {
  return { tenant: "default", id, plan: planWorkflow(DefinitionSchema.parse(def)), input: null, requestHash: `hash-of-${id}` };
}

/** The RPC's rejection, or undefined when it resolved. */
const rejectionOf = (call: Promise<unknown>) => call.then(() => undefined, (error: unknown) => error);

describe("case 13: crash mid-transition", () => {
  it("keeps none of a start the object died committing; the retried start on a fresh stub applies it whole, once", async () => {
    const remote = mockRemote(() => json({ ok: true }));
    const id = uniqueId();
    const queue = watchSends();
    const request = startRequest(id, definition(300));
    injectFault("abortAfterPersist", { probability: 1, times: 1 });

    // The object resets right after persisting the start (state, history, outbox, alarm), before its sends.
    expect(await rejectionOf(schedulerStub(id).start(request))).toMatchObject({ message: CRASH, durableObjectReset: true });
    expect(timesFired("abortAfterPersist")).toBe(1);

    // None of it: no workflow, no history, no alarm, nothing sent, nothing indexed.
    expect(await objectRecord(id)).toEqual({ exists: false, alarmAt: null });
    expect(await schedulerStub(id).describe()).toBeUndefined();
    expect(queue.of(id)).toEqual([]);
    expect(await indexRow(id)).toBeNull();

    // The retried start applies it whole; a repeat of it changes nothing.
    const retried = await schedulerStub(id).start(request);
    expect(retried).toMatchObject({ ok: true, created: true, workflow: { id, status: "running", steps: [{ id: "a", status: "scheduled", attempt: 1 }] } });
    const after = await objectRecord(id);
    const repeated = await schedulerStub(id).start(request);
    expect(repeated).toMatchObject({ ok: true, created: false });
    expect(await objectRecord(id)).toEqual(after);
    expect(after.events?.map((event) => event.type)).toEqual(["workflow_started", "step_scheduled"]);
    expect(after.alarmAt).toBe(after.workflow!.next_deadline_at);
    expect(queue.of(id).map((entry) => entry.message.attempt)).toEqual([1]);

    const workflow = await waitForStatus(id, "completed");
    expect(workflow.steps[0].attempts).toHaveLength(1);
    expect(remote.requestsFor(`${id}:a`)).toBe(1);
  });

  it("hides the crash from the client: the front door retries the idempotent start on a fresh stub and answers 201 once", async () => {
    const remote = mockRemote(() => json({ ok: true }));
    const id = uniqueId();
    const queue = watchSends();
    injectFault("abortAfterPersist", { probability: 1, times: 1 });

    const first = await api("POST", "/v1/workflows", { id, definition: definition(300) });
    expect(timesFired("abortAfterPersist")).toBe(1);
    expect(first.status).toBe(201);
    expect(first.body).toMatchObject({ id, status: "running", steps: [{ id: "a", status: "scheduled", attempt: 1 }] });
    expect((await api("POST", "/v1/workflows", { id, definition: definition(300) })).status).toBe(200);

    expect((await historyOf(id)).filter((event) => event.type === "workflow_started")).toHaveLength(1);
    const workflow = await waitForStatus(id, "completed");
    expect(workflow.steps[0].attempts).toHaveLength(1);
    expect(queue.of(id).map((entry) => entry.message.attempt)).toEqual([1]);
    expect(remote.requestsFor(`${id}:a`)).toBe(1);
    await vi.waitFor(async () => expect((await indexRow(id))?.status).toBe("completed"));
  });

  it("keeps none of a claim the object died committing: the attempt is still scheduled, the retried claim takes it, a third is refused", async () => {
    const id = uniqueId();
    watchSends(() => true);
    expect((await schedulerStub(id).start(startRequest(id, definition(60_000)))).ok).toBe(true);
    const before = await objectRecord(id);
    injectFault("abortAfterPersist", { probability: 1, times: 1 });

    expect(await rejectionOf(schedulerStub(id).claim("a", 1))).toMatchObject({ message: CRASH, durableObjectReset: true });
    expect(await objectRecord(id)).toEqual(before);

    expect(await schedulerStub(id).claim("a", 1)).toMatchObject({ ok: true, task: { stepId: "a", attempt: 1 } });
    const claimed = await objectRecord(id);
    expect(claimed.workflow!.version).toBe(before.workflow!.version + 1);
    expect(await schedulerStub(id).claim("a", 1)).toMatchObject({ ok: false, code: "already_claimed" });
    expect(await objectRecord(id)).toEqual(claimed);
    expect((await historyOf(id)).filter((event) => event.type === "step_started")).toHaveLength(1);
    await schedulerStub(id).command({ command: "cancel", by: { actor: "operator" } });
  });

  it("keeps none of a completion the object died committing; the agent's retried report is applied whole, once, and a repeat is gone", async () => {
    const id = uniqueId();
    watchSends(() => true);
    expect((await schedulerStub(id).start(startRequest(id, definition(60_000)))).ok).toBe(true);
    expect((await schedulerStub(id).claim("a", 1)).ok).toBe(true);
    const before = await objectRecord(id);
    injectFault("abortAfterPersist", { probability: 1, times: 1 });

    const crash = await rejectionOf(schedulerStub(id).report("a", 1, { type: "succeeded", output: { done: true } }));
    expect(crash).toMatchObject({ message: CRASH, durableObjectReset: true });
    // None of it: state, steps, history, outbox and alarm are exactly as before, and D1 never heard of an end.
    expect(await objectRecord(id)).toEqual(before);
    expect((await api("GET", `/v1/workflows/${id}`)).body).toMatchObject({ status: "running", steps: [{ status: "running" }] });
    expect((await indexRow(id))?.status).toBe("running");

    // All of it, once: the retried report ends the step and the workflow in one transition.
    expect(await schedulerStub(id).report("a", 1, { type: "succeeded", output: { done: true } })).toMatchObject({ ok: true });
    const after = await objectRecord(id);
    expect(after.workflow).toMatchObject({ status: "completed", version: before.workflow!.version + 1 });
    expect(after.events!.slice(before.events!.length).map((event) => event.type)).toEqual(["step_succeeded", "workflow_completed"]);
    expect(after.alarmAt).toBeNull();
    expect(after.outbox).toEqual([]);
    expect(await indexRow(id)).toMatchObject({ status: "completed", version: after.workflow!.version });

    // Repeating it is refused and changes nothing: the first output stands.
    expect(await schedulerStub(id).report("a", 1, { type: "succeeded", output: { done: "again" } })).toMatchObject({ ok: false, code: "gone" });
    expect(await objectRecord(id)).toEqual(after);
    expect((await api("GET", `/v1/workflows/${id}`)).body.steps[0].output).toEqual({ done: true });
  });

  it("answers a remote's completion 200 through the crash: the task route retries the fenced report on a fresh stub", async () => {
    const remote = mockRemote(() => json({ accepted: true }, 202));
    const id = uniqueId();
    expect((await api("POST", "/v1/workflows", { id, definition: definition(60_000) })).status).toBe(201);
    await vi.waitFor(async () => expect((await api("GET", `/v1/workflows/${id}`)).body.steps[0].status).toBe("waiting"));
    const token = remote.calls[0]!.headers["shepherd-task-token"]!;
    const before = await objectRecord(id);
    injectFault("abortAfterPersist", { probability: 1, times: 1 });

    expect(await callTask(token, "complete", { output: { n: 1 } })).toEqual({ status: 200, body: { ok: true } });
    expect(timesFired("abortAfterPersist")).toBe(1);
    const after = await objectRecord(id);
    expect(after.workflow).toMatchObject({ status: "completed", version: before.workflow!.version + 1 });
    expect(after.events!.filter((event) => event.type === "workflow_completed")).toHaveLength(1);
    // The remote retrying its own call (it never saw the crash, but it might) is told the step has ended.
    expect((await callTask(token, "complete", { output: { n: 2 } })).status).toBe(410);
    expect((await api("GET", `/v1/workflows/${id}`)).body.output).toEqual({ a: { n: 1 } });
  });

  it("keeps all of a transition that was durable when the object died before its send; the alarm finds the unsent dispatch in the outbox and sends the same attempt", async () => {
    const remote = mockRemote(() => json({ ok: true }));
    const id = uniqueId();
    const stub = schedulerStub(id);
    // Attempt a/1 is held (the test plays its agent); b/1's send finds the object dying right after its
    // transition was synced to disk, so the transition is durable and only the send is lost.
    let crashed = false;
    const sendBatch = await runInDurableObject(stub, (instance, state) => {
      const queue = taskQueueOf(id, (instance as unknown as { env: Env }).env);
      const real = queue.sendBatch.bind(queue);
      return vi.spyOn(queue, "sendBatch").mockImplementation(async (messages, options) => {
        const list = [...messages];
        const bodies = list.map((message) => message.body as { workflowId: string; stepId: string; attempt: number });
        if (bodies.some((body) => body.workflowId === id && body.stepId === "a" && body.attempt === 1)) return {} as QueueSendBatchResponse;
        if (!crashed && bodies.some((body) => body.workflowId === id && body.stepId === "b" && body.attempt === 1)) {
          crashed = true;
          await state.storage.sync();
          state.abort("crash after the commit, before the send");
        }
        return real(list, options);
      });
    });
    expect((await stub.start(startRequest(id, definition(undefined, ["a", "b"])))).ok).toBe(true);
    expect((await stub.claim("a", 1)).ok).toBe(true);
    const before = await objectRecord(id);

    // The agent of a/1 reports without taking follow-ups, so b/1 goes through the queue.
    expect(await rejectionOf(schedulerStub(id).report("a", 1, { type: "succeeded", output: { a: 1 } }, 0))).toMatchObject({ durableObjectReset: true });

    // All of it: a succeeded and b/1 scheduled, in one version, with its history, its unsent message and its alarm.
    const after = await objectRecord(id);
    expect(after.workflow!.version).toBe(before.workflow!.version + 1);
    expect(after.events!.slice(before.events!.length).map((event) => [event.type, event.step_id])).toEqual([
      ["step_succeeded", "a"],
      ["step_scheduled", "b"],
    ]);
    const view = (await api("GET", `/v1/workflows/${id}`)).body;
    expect(view.steps.map((step: { status: string }) => step.status)).toEqual(["succeeded", "scheduled"]);
    expect(await unsentTasks(id)).toEqual([{ stepId: "b", attempt: 1, kind: "action" }]);
    // Armed, never later than the lease of the send (b/1 itself has no deadline: no schedule-to-start).
    expect(after.alarmAt).toEqual(expect.any(Number));
    expect(after.alarmAt!).toBeLessThanOrEqual(view.steps[1].attempts[0].scheduledAt + SEND_LEASE_MS);

    // Nobody calls the object again: its alarm sends b/1 (the same attempt, no attempt used), which completes it.
    expect(await runDurableObjectAlarm(schedulerStub(id))).toBe(true);
    const workflow = await waitForStatus(id, "completed");
    expect(workflow.steps[1].attempts.map((attempt: { n: number; status: string }) => [attempt.n, attempt.status])).toEqual([[1, "succeeded"]]);
    expect(workflow.output).toEqual({ a: { a: 1 }, b: { ok: true } });
    expect(await unsentTasks(id)).toEqual([]);
    expect(remote.requestsFor(`${id}:a`)).toBe(0);
    expect(remote.requestsFor(`${id}:b`)).toBe(1);
    expect(sendBatch).toHaveBeenCalled();

    // The agent's retried report changes nothing.
    expect(await schedulerStub(id).report("a", 1, { type: "succeeded", output: { a: 2 } }, 0)).toMatchObject({ ok: false, code: "gone" });
  });

  it("runs a tick that crashes twice in a row again within a second each time, and the run after the crashes does the due work once", async () => {
    const id = uniqueId();
    watchSends(() => true);
    // A minute's backoff, so no alarm of the object's own runs the retry while the test reads what the tick did.
    const patient = definition(undefined);
    const retry = { ...patient.defaults.retry, initialIntervalMs: 60_000 };
    expect((await schedulerStub(id).start(startRequest(id, { ...patient, defaults: { ...patient.defaults, retry } }))).ok).toBe(true);
    // The agent of a/1 claims it and dies: its start-to-close deadline (60 s) is what the tick has to act on.
    expect((await schedulerStub(id).claim("a", 1)).ok).toBe(true);
    await backdate(id, { ms: 60_000 });
    const due = await objectRecord(id);

    for (const crash of [1, 2]) {
      injectFault("abortAfterPersist", { probability: 1, times: 1 });
      const before = Date.now();
      expect(await rejectionOf(fireAlarm(id))).toMatchObject({ message: CRASH, durableObjectReset: true });
      const after = Date.now();
      expect(timesFired("abortAfterPersist")).toBe(crash);
      // The crash dropped the tick's commit and the alarm it set; the guard written and synced before the tick stays.
      const crashed = await objectRecord(id);
      expect({ ...crashed, alarmAt: due.alarmAt }).toEqual(due);
      expect(crashed.alarmAt).toBeGreaterThanOrEqual(before + TICK_RERUN_MS);
      expect(crashed.alarmAt).toBeLessThanOrEqual(after + TICK_RERUN_MS);
    }

    // The guard's run applies the timeout once and sets the alarm for the retry's backoff, the next deadline.
    expect(await fireAlarm(id)).toBe(true);
    const done = await objectRecord(id);
    expect(done.events!.slice(due.events!.length).map((event) => [event.type, event.attempt])).toEqual([
      ["step_timed_out", 1],
      ["step_retry_scheduled", 1],
    ]);
    expect(done.alarmAt).toBe(done.workflow!.next_deadline_at);
    await schedulerStub(id).command({ command: "cancel", by: { actor: "operator" } });
  });
});

/** The task messages an object committed and the queue has not accepted yet, from its outbox. */
async function unsentTasks(id: string) {
  const { outbox = [] } = await objectRecord(id);
  return outbox.filter((row) => row.kind === "task").map((row) => JSON.parse(row.payload_json));
}
