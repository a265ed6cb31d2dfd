// Who acted: every operator route records the acting token's name and the reason given in the workflow's
// history. One row per route of the commands' table (a command added there without a row here fails the
// first test), plus the events route, all called through the Worker's front door with the real objects.
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { OPERATOR_COMMANDS, REASON_MAX_LENGTH, type OperatorCommandName } from "../../src/domain/contract";
import { api, bearer, historyOf, NAMED_TOKEN, snapshot, start, uniqueId, waitForStatus } from "../helpers/api";
import { json, mockRemote, REMOTE } from "../helpers/remote";

/** Nothing times out while a test looks: the workflow only changes when asked. */
const STILL = { retry: { maxAttempts: 1 }, timeouts: { startToCloseMs: 600_000, heartbeatMs: 600_000 } };

beforeAll(() => {
  // `/fail-now` fails for good (422); any other path accepts and would report later (202).
  mockRemote((call) => (new URL(call.url).pathname === "/fail-now" ? json({ error: "declined" }, 422) : json({ accepted: true }, 202)));
});
afterAll(() => vi.restoreAllMocks());

/** A running workflow whose one step waits for the event "approved" (no agent involved). */
async function running(): Promise<string> {
  const { id } = await start({ name: "acted-running", steps: [{ id: "approval", waitForEvent: { event: "approved", timeoutMs: 600_000 } }] });
  await waitForStatus(id, "running");
  return id;
}

/** A workflow whose step "charge" failed for good: `needs_attention` with escalate, `failed` with fail. */
async function failedStep(onFailure: "escalate" | "fail"): Promise<string> {
  const { id } = await start({ name: `acted-${onFailure}`, onFailure, defaults: STILL, steps: [{ id: "charge", action: { type: "http", url: `${REMOTE}/fail-now` } }] });
  await waitForStatus(id, onFailure === "escalate" ? "needs_attention" : "failed");
  return id;
}

async function paused(): Promise<string> {
  const id = await running();
  expect((await api("POST", `/v1/workflows/${id}/pause`)).status).toBe(202);
  return id;
}

interface Row {
  /** Makes a workflow the route acts on; returns its id. */
  given: () => Promise<string>;
  /** The route's path after `/v1/workflows/{id}/`. */
  path: string;
  /** The body's own fields, beside the reason. */
  body?: Record<string, unknown>;
  /** The history entry that records the action. */
  recordedAs: string;
}

const COMMAND_ROWS: Record<OperatorCommandName, Row> = {
  cancel: { given: running, path: "cancel", recordedAs: "operator_action" },
  compensate: { given: () => failedStep("escalate"), path: "compensate", recordedAs: "operator_action" },
  retryStep: { given: () => failedStep("escalate"), path: "steps/charge/retry", recordedAs: "operator_action" },
  skipStep: { given: () => failedStep("escalate"), path: "steps/charge/skip", body: { output: { skipped: true } }, recordedAs: "operator_action" },
  pause: { given: running, path: "pause", recordedAs: "workflow_paused" },
  resume: { given: paused, path: "resume", recordedAs: "workflow_resumed" },
  terminate: { given: running, path: "terminate", recordedAs: "workflow_terminated" },
  redrive: { given: () => failedStep("fail"), path: "redrive", recordedAs: "workflow_redriven" },
};

const ROWS: [string, Row][] = [
  ...Object.entries(COMMAND_ROWS).map(([name, row]): [string, Row] => [`POST ${OPERATOR_COMMANDS[name as OperatorCommandName].path}`, row]),
  ["POST /v1/workflows/{id}/events", { given: running, path: "events", body: { event: "approved", payload: { ok: true } }, recordedAs: "event_received" }],
];

const ALICE = { Authorization: `Bearer ${NAMED_TOKEN.token}` };

/** The history entries of a workflow that say who acted. */
async function actedEntries(id: string) {
  return (await historyOf(id)).filter((event) => event.data?.actor !== undefined);
}

describe("the rows", () => {
  it("cover every operator command of the table", () => {
    expect(Object.keys(COMMAND_ROWS).sort()).toEqual(Object.keys(OPERATOR_COMMANDS).sort());
  });
});

describe.each(ROWS)("%s", (_route, row) => {
  it("records the named token's name and the reason in the history", async () => {
    const id = await row.given();
    const reason = `ticket ${uniqueId("T")}`;

    const response = await api("POST", `/v1/workflows/${id}/${row.path}`, { ...row.body, reason }, { headers: ALICE });

    expect(response.status, JSON.stringify(response.body)).toBe(202);
    const acted = await actedEntries(id);
    expect(acted.map((event) => [event.type, event.data.actor, event.data.reason])).toContainEqual([row.recordedAs, NAMED_TOKEN.name, reason]);
  });

  it("records the tenant as the actor of a token without a name, and no reason when none was given", async () => {
    const id = await row.given();

    const response = await api("POST", `/v1/workflows/${id}/${row.path}`, row.body ?? {}, { headers: bearer("default") });

    expect(response.status, JSON.stringify(response.body)).toBe(202);
    const entry = (await actedEntries(id)).find((event) => event.type === row.recordedAs && event.data.actor === "default");
    expect(entry?.data).toBeDefined();
    expect(entry?.data).not.toHaveProperty("reason");
  });

  it.each([
    ["an empty reason", ""],
    ["a reason over the limit", "x".repeat(REASON_MAX_LENGTH + 1)],
    ["a reason that is not text", 42],
  ])("refuses %s with 400 naming the field, and changes nothing", async (_name, reason) => {
    const id = await row.given();
    const before = await snapshot("default", id);

    const response = await api("POST", `/v1/workflows/${id}/${row.path}`, { ...row.body, reason }, { headers: ALICE });

    expect(response.status).toBe(400);
    expect(response.body.error).toMatchObject({ code: "validation_failed", message: expect.stringContaining("reason") });
    expect(await snapshot("default", id)).toEqual(before);
  });
});

describe("a command without a body", () => {
  it("is still recorded with who acted", async () => {
    const id = await running();

    const response = await api("POST", `/v1/workflows/${id}/cancel`, undefined, { headers: ALICE });

    expect(response.status).toBe(202);
    expect((await actedEntries(id)).map((event) => event.data)).toContainEqual({ action: "cancel", actor: NAMED_TOKEN.name });
  });
});

describe("a named token", () => {
  it("acts for its tenant: alice sees, and acts on, the workflows of tenant default", async () => {
    const id = await running();

    const seen = await api("GET", `/v1/workflows/${id}`, undefined, { headers: ALICE });

    expect(seen.status).toBe(200);
    expect(seen.body.id).toBe(id);
  });

  it("the terminate reason becomes the workflow's error, as before", async () => {
    const id = await running();

    const response = await api("POST", `/v1/workflows/${id}/terminate`, { reason: "duplicate order" }, { headers: ALICE });

    expect(response.status).toBe(202);
    expect(response.body).toMatchObject({ status: "terminated", error: { message: "duplicate order" } });
  });
});
