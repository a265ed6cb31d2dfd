// Per-error retry rules through the real objects, queue and agents (contract v1.2, "Per-error retry rules"): a
// step's `retry.nonRetryableStatuses` and `retry.retryableStatuses` move HTTP statuses across the
// transient/permanent line, a worker's `fail` with `retryable: false` is permanent, and the step's view and history
// say which rule decided.
import { afterEach, describe, expect, it, vi } from "vitest";
import { api, historyOf, start, uniqueId, waitForStatus } from "../helpers/api";
import { FAST } from "../helpers/policies";
import { httpStep, json, mockRemote } from "../helpers/remote";

afterEach(() => vi.restoreAllMocks());

/** A definition of one http step "pay" that fails the workflow when the step fails for good. */
function paying(retry: Record<string, unknown>, defaults: Record<string, unknown> = {}) {
  return { name: "paying", onFailure: "fail", defaults: { ...FAST, ...defaults }, steps: [httpStep("pay", { retry: { ...FAST.retry, ...retry } })] };
}

async function failuresOf(id: string) {
  return (await historyOf(id)).filter((event) => event.type === "step_failed").map((event) => ({ attempt: event.attempt, final: event.data.final, error: event.data.error }));
}

describe("a step's status lists", () => {
  it("fails a step answered 409 for good at once when nonRetryableStatuses lists it", async () => {
    const remote = mockRemote(() => json({ error: "already charged" }, 409));
    const { id } = await start(paying({ maxAttempts: 5, nonRetryableStatuses: [409] }));

    const workflow = await waitForStatus(id, "failed");

    expect(remote.requestsFor(`${id}:pay`)).toBe(1);
    const error = { message: 'remote answered 409: {"error":"already charged"}', retryable: false, status: 409, rule: "nonRetryableStatuses" };
    expect(workflow.steps[0]).toMatchObject({ status: "failed", attempt: 1, error, attempts: [{ n: 1, status: "failed", error }] });
    expect(await failuresOf(id)).toEqual([{ attempt: 1, final: true, error }]);
    expect((await historyOf(id)).some((event) => event.type === "step_retry_scheduled")).toBe(false);
  });

  it("retries a step answered 404 when retryableStatuses lists it, until the remote has the record", async () => {
    const remote = mockRemote((_call, n) => (n <= 2 ? json({ error: "no such order yet" }, 404) : json({ ok: true })));
    const { id } = await start(paying({ maxAttempts: 5, retryableStatuses: [404] }));

    const workflow = await waitForStatus(id, "completed");

    expect(remote.requestsFor(`${id}:pay`)).toBe(3);
    const error = { message: 'remote answered 404: {"error":"no such order yet"}', retryable: true, status: 404, rule: "retryableStatuses" };
    expect(workflow.steps[0].attempts.map((attempt: { status: string; error?: unknown }) => [attempt.status, attempt.error])).toEqual([
      ["failed", error],
      ["failed", error],
      ["succeeded", undefined],
    ]);
    expect(await failuresOf(id)).toEqual([
      { attempt: 1, final: false, error },
      { attempt: 2, final: false, error },
    ]);
    expect((await historyOf(id)).filter((event) => event.type === "step_retry_scheduled").map((event) => event.attempt)).toEqual([1, 2]);
  });

  it("still gives up on a retryable status once the attempts run out", async () => {
    const remote = mockRemote(() => json({ error: "still missing" }, 404));
    const { id } = await start(paying({ maxAttempts: 2, retryableStatuses: [404] }));

    const workflow = await waitForStatus(id, "failed");

    expect(remote.requestsFor(`${id}:pay`)).toBe(2);
    expect((await failuresOf(id)).map(({ final, error }) => [final, error.rule])).toEqual([
      [false, "retryableStatuses"],
      [true, "retryableStatuses"],
    ]);
    expect(workflow.steps[0].error).toMatchObject({ status: 404, retryable: true, rule: "retryableStatuses" });
  });

  it.each([
    { status: 409, requests: 1, retryable: false, outcome: "failed" },
    { status: 503, requests: 3, retryable: true, outcome: "failed" },
  ])("without lists, decides a $status by the default (retryable: $retryable)", async ({ status, requests, retryable, outcome }) => {
    const remote = mockRemote(() => json({ error: "no" }, status));
    const { id } = await start(paying({ maxAttempts: 3 }));

    await waitForStatus(id, outcome);

    expect(remote.requestsFor(`${id}:pay`)).toBe(requests);
    expect((await failuresOf(id)).map(({ error }) => [error.retryable, error.rule])).toEqual(Array.from({ length: requests }, () => [retryable, "default"]));
  });

  it("takes the definition's lists as the steps' default, and a step's own list wins over them", async () => {
    const remote = mockRemote((_call, n) => (n === 1 ? json({ error: "conflict" }, 409) : json({ ok: true })));
    const definition = {
      name: "layered",
      onFailure: "fail",
      defaults: { ...FAST, retry: { ...FAST.retry, maxAttempts: 3, nonRetryableStatuses: [409] } },
      steps: [httpStep("pay", { retry: { retryableStatuses: [409] } })],
    };
    const { id } = await start(definition);

    await waitForStatus(id, "completed");

    expect(remote.requestsFor(`${id}:pay`)).toBe(2);
    expect((await failuresOf(id)).map(({ error }) => error.rule)).toEqual(["retryableStatuses"]);
  });

  it("refuses a definition that lists a status in both, with a 400 naming the field, and starts nothing", async () => {
    const id = uniqueId("both");
    const response = await api("POST", "/v1/workflows", { id, definition: paying({ retryableStatuses: [404, 409], nonRetryableStatuses: [409] }) });

    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe("validation_failed");
    expect(response.body.error.message).toBe("Invalid request: definition.steps.0.retry.nonRetryableStatuses.0 cannot be in retryableStatuses too: 409 is retried or not, never both.");
    expect((await api("GET", `/v1/workflows/${id}`)).status).toBe(404);
  });
});

describe("a fail report", () => {
  /** A step whose remote answers 202: it reports later through its task token, as a worker does. */
  async function acceptedStep(): Promise<{ id: string; token: string }> {
    const remote = mockRemote(() => json({ accepted: true }, 202));
    const { id } = await start(paying({ maxAttempts: 3, retryableStatuses: [404] }));
    const token = await vi.waitFor(
      () => {
        const sent = remote.calls.find((call) => call.headers["shepherd-workflow-id"] === id)?.headers["shepherd-task-token"];
        if (!sent) throw new Error("no task token sent yet");
        return sent;
      },
      { timeout: 10_000, interval: 20 },
    );
    return { id, token };
  }

  it("with retryable: false fails the step for good at once, decided by the report", async () => {
    const { id, token } = await acceptedStep();

    const reported = await api("POST", `/v1/tasks/${token}/fail`, { error: { message: "card expired", retryable: false } });

    expect(reported.status).toBe(200);
    const workflow = await waitForStatus(id, "failed");
    const error = { message: "card expired", retryable: false, rule: "reported" };
    expect(workflow.steps[0]).toMatchObject({ status: "failed", attempt: 1, error });
    expect(await failuresOf(id)).toEqual([{ attempt: 1, final: true, error }]);
  });

  it("without retryable is retried, decided by the report", async () => {
    const { id, token } = await acceptedStep();

    expect((await api("POST", `/v1/tasks/${token}/fail`, { error: { message: "try later" } })).status).toBe(200);

    await vi.waitFor(async () => expect((await failuresOf(id))[0]).toEqual({ attempt: 1, final: false, error: { message: "try later", retryable: true, rule: "reported" } }), { timeout: 10_000, interval: 20 });
  });
});
