import { afterEach, describe, expect, it, vi } from "vitest";
import { api, historyOf, start, uniqueId, waitForStatus, waitForStep } from "../helpers/api";
import { indexRow } from "../helpers/index-db";
import { json, mockRemote, REMOTE } from "../helpers/remote";
import { FAST } from "../helpers/policies";
import { byteLength, watchSends } from "../helpers/queue";
import { objectRecord } from "../helpers/scheduler";
import { callTask } from "../helpers/tasks";

afterEach(() => vi.restoreAllMocks());

/** The contract's limit on a workflow's input and a step's output (and heartbeat progress). */
const PAYLOAD_LIMIT = 128 * 1024;
const BODY_LIMIT = 1024 * 1024;
/** Queues refuse messages over 128 KB; staying under ~120 KB leaves room for the envelope. */
const QUEUE_MESSAGE_BUDGET = 120 * 1024;

/** A JSON object whose serialized size is exactly `bytes`. */
function payloadOf(bytes: number): { blob: string } {
  const overhead = byteLength({ blob: "" });
  return { blob: "x".repeat(bytes - overhead) };
}

const echoStep = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  defaults: FAST,
  steps: [{ id: "a", action: { type: "http", url: `${REMOTE}/a`, body: { all: "{{ input }}" } }, ...extra }],
});

/** Nothing of a refused start exists anywhere: not in the object, not in the index, not on the queue. */
async function expectNothingStarted(id: string, queue: ReturnType<typeof watchSends>) {
  expect((await api("GET", `/v1/workflows/${id}`)).status).toBe(404);
  expect(await objectRecord(id)).toEqual({ exists: false, alarmAt: null });
  expect(await indexRow(id)).toBeNull();
  expect(queue.of(id)).toEqual([]);
}

function expectQueueMessagesSmall(queue: ReturnType<typeof watchSends>) {
  expect(queue.sent.length).toBeGreaterThan(0);
  const largest = Math.max(...queue.sent.map((entry) => entry.bytes));
  expect(largest).toBeLessThan(QUEUE_MESSAGE_BUDGET);
  // A message names an attempt and carries its token; the payload is claimed from the object.
  expect(largest).toBeLessThan(1024);
}

describe("case 19: oversized payload", () => {
  it("refuses an input one byte over 128 KiB with 400 validation_failed before anything is stored or enqueued", async () => {
    const id = uniqueId();
    const queue = watchSends();
    const input = payloadOf(PAYLOAD_LIMIT + 1);
    expect(byteLength(input)).toBe(PAYLOAD_LIMIT + 1);
    const response = await api("POST", "/v1/workflows", { id, definition: echoStep("big-input"), input });
    expect(response.status).toBe(400);
    expect(response.body.error).toMatchObject({ code: "validation_failed" });
    expect(response.body.error.details).toContainEqual(expect.objectContaining({ path: ["input"], message: expect.stringMatching(/over the limit/) }));
    await expectNothingStarted(id, queue);
  });

  it("refuses a step action body over 128 KiB in the definition with 400 before anything is stored or enqueued", async () => {
    const id = uniqueId();
    const queue = watchSends();
    const definition = { name: "big-step", defaults: FAST, steps: [{ id: "a", action: { type: "http", url: `${REMOTE}/a`, body: payloadOf(PAYLOAD_LIMIT + 1) } }] };
    const response = await api("POST", "/v1/workflows", { id, definition });
    expect(response.status).toBe(400);
    expect(response.body.error.details).toContainEqual(expect.objectContaining({ path: ["definition", "steps", 0, "action", "body"] }));
    await expectNothingStarted(id, queue);
  });

  it("refuses a request body over 1 MiB with 413 payload_too_large before anything is stored or enqueued", async () => {
    const id = uniqueId();
    const queue = watchSends();
    const body = { id, definition: echoStep("huge-body"), input: { parts: Array.from({ length: 9 }, () => "x".repeat(120 * 1024)) } };
    expect(byteLength(body)).toBeGreaterThan(BODY_LIMIT);
    const response = await api("POST", "/v1/workflows", body);
    expect(response.status).toBe(413);
    expect(response.body.error.code).toBe("payload_too_large");
    await expectNothingStarted(id, queue);
  });

  it("keeps every queue message far under the queue's limit when the input, the step body and the output are all near 128 KiB", async () => {
    const remote = mockRemote((call) => (new URL(call.url).pathname === "/a" ? json({ pad: "y".repeat(PAYLOAD_LIMIT - 1024) }) : json({ ok: true })));
    const id = uniqueId();
    const queue = watchSends();
    const input = payloadOf(PAYLOAD_LIMIT - 64);
    const definition = {
      name: "big-but-legal",
      defaults: FAST,
      steps: [
        { id: "a", action: { type: "http", url: `${REMOTE}/a`, body: { all: "{{ input }}" } } },
        // b reads a's whole output: it travels through the claim, never through the queue.
        { id: "b", action: { type: "http", url: `${REMOTE}/b`, body: { previous: "{{ steps.a.output }}" } } },
      ],
    };
    expect((await api("POST", "/v1/workflows", { id, definition, input })).status).toBe(201);
    const workflow = await waitForStatus(id, "completed");

    expectQueueMessagesSmall(queue);
    expect(remote.callsTo("/a")[0]!.body.all).toEqual(input);
    expect(remote.callsTo("/b")[0]!.body.previous).toEqual(workflow.steps[0].output);
    expect(byteLength(workflow.steps[0].output)).toBeGreaterThan(PAYLOAD_LIMIT - 1024);
  });

  it("fails an attempt whose remote answers more than 128 KiB, retries it, and never puts the answer on the queue", async () => {
    const huge = "z".repeat(PAYLOAD_LIMIT + 1024);
    const remote = mockRemote((_call, n) => (n === 1 ? new Response(huge) : json({ small: true })));
    const id = uniqueId();
    const queue = watchSends();
    await start(echoStep("big-answer"), { id, input: { n: 1 } });
    const workflow = await waitForStatus(id, "completed");

    expect(workflow.steps[0].attempts.map((attempt: { status: string }) => attempt.status)).toEqual(["failed", "succeeded"]);
    expect(workflow.steps[0].attempts[0].error).toMatchObject({ message: expect.stringMatching(/exceeds 131072 bytes/), retryable: true });
    expect(workflow.output).toEqual({ a: { small: true } });
    expect(remote.requestsFor(`${id}:a`)).toBe(2);
    expectQueueMessagesSmall(queue);
    // Nothing of the oversized answer was stored either.
    expect(JSON.stringify(await historyOf(id))).not.toContain("zzzz");
  });

  it("refuses oversized progress and output on the task routes with 400, leaving the waiting step as it was", async () => {
    const remote = mockRemote(() => json({}, 202));
    const { id } = await start({ ...echoStep("big-callback"), defaults: { ...FAST, timeouts: { ...FAST.timeouts, heartbeatMs: 60_000, startToCloseMs: 60_000 } } });
    await waitForStep(id, "a", "waiting");
    const token = remote.calls[0]!.headers["shepherd-task-token"]!;
    const before = await objectRecord(id);

    for (const [action, body] of [
      ["heartbeat", { progress: payloadOf(PAYLOAD_LIMIT + 1) }],
      ["complete", { output: payloadOf(PAYLOAD_LIMIT + 1) }],
    ] as const) {
      const response = await callTask(token, action, body);
      expect(response.status, action).toBe(400);
      expect(response.body.error.code).toBe("validation_failed");
    }
    expect(await objectRecord(id)).toEqual(before);
    expect(await callTask(token, "complete", { output: payloadOf(PAYLOAD_LIMIT) })).toEqual({ status: 200, body: { ok: true } });
    await waitForStatus(id, "completed");
  });
});
