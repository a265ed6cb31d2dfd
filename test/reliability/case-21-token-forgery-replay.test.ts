import { env } from "cloudflare:workers";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { toBase64Url } from "../../src/domain/security/base64url";
import { signTaskToken, TASK_TOKEN_GRACE_MS } from "../../src/domain/security/task-token";
import { api, historyOf, start, waitForStatus, waitForStep } from "../helpers/api";
import { json, mockRemote, REMOTE } from "../helpers/remote";
import { FAST } from "../helpers/policies";
import { objectRecord } from "../helpers/scheduler";
import { callTask, tokenClaims } from "../helpers/tasks";

// What ends a token's power: its expiry (the attempt's start-to-close deadline plus a grace period: 401), and
// fencing by attempt (once the step moved on to a newer attempt, the old token is refused with 409
// `stale_attempt`; once the step ended, every token for it gets 410 `gone`).

const ACTIONS = ["heartbeat", "complete", "fail"] as const;
const BODIES = { heartbeat: { progress: { p: 1 } }, complete: { output: { forged: true } }, fail: { error: { message: "forged", retryable: false } } };

const definition = (name: string) => ({
  name,
  onFailure: "fail",
  defaults: { ...FAST, timeouts: { ...FAST.timeouts, heartbeatMs: 60_000, startToCloseMs: 60_000 } },
  steps: [{ id: "render", action: { type: "http", url: `${REMOTE}/render` } }],
});

const encodeClaims = (claims: unknown[]) => toBase64Url(new TextEncoder().encode(JSON.stringify(claims)));

let remote: ReturnType<typeof mockRemote>;
/** A workflow whose step is on attempt 2 (attempt 1 got a 503), waiting for its remote; and a second one. */
let target: { id: string; previous: string; current: string };
let other: { id: string; token: string };

beforeAll(async () => {
  remote = mockRemote((call, n) => (call.headers["shepherd-workflow-id"]!.startsWith("target") && n === 1 ? json({}, 503) : json({ accepted: true }, 202)));
  const { id } = await start(definition("tokens"), { id: `target-${Date.now().toString(36)}` });
  await waitForStep(id, "render", "waiting");
  const [previous, current] = remote.calls.filter((call) => call.headers["shepherd-workflow-id"] === id).map((call) => call.headers["shepherd-task-token"]!);
  target = { id, previous: previous!, current: current! };
  const second = await start(definition("tokens-other"));
  await waitForStep(second.id, "render", "waiting");
  other = { id: second.id, token: remote.calls.find((call) => call.headers["shepherd-workflow-id"] === second.id)!.headers["shepherd-task-token"]! };
});
afterAll(() => vi.restoreAllMocks());

describe("case 21: agent token forgery/replay", () => {
  it("has two genuine tokens for the target's two attempts, and one for another workflow", async () => {
    expect(target.previous).not.toBe(target.current);
    expect((await api("GET", `/v1/workflows/${target.id}`)).body.steps[0]).toMatchObject({ status: "waiting", attempt: 2 });
  });

  it("refuses forged and altered tokens with 401 on every task route, and nothing reaches either workflow", async () => {
    const [payload, signature] = target.current.split(".") as [string, string];
    const [otherPayload] = other.token.split(".") as [string, string];
    const flipped = `${signature[0] === "A" ? "B" : "A"}${signature.slice(1)}`;
    const forged: [string, string][] = [
      ["a flipped signature", `${payload}.${flipped}`],
      ["a signature from another secret", await signTaskToken({ tenant: "default", workflowId: target.id, stepId: "render", attempt: 2 }, "not-the-deployment-secret")],
      ["the claims of another workflow with this signature", `${otherPayload}.${signature}`],
      ["this workflow's claims for a later attempt", `${encodeClaims(["default", target.id, "render", 3])}.${signature}`],
      ["this workflow's claims for another tenant", `${encodeClaims(["alpha", target.id, "render", 2])}.${signature}`],
      ["no signature", `${payload}.`],
      ["the payload alone", payload],
      ["an extra segment", `${target.current}.x`],
      ["no token at all", "not-a-token"],
    ];
    const before = { target: await objectRecord(target.id), other: await objectRecord(other.id) };
    for (const [name, token] of forged) {
      for (const action of ACTIONS) {
        const response = await callTask(encodeURIComponent(token), action, BODIES[action]);
        expect(response.status, `${name}: ${action}`).toBe(401);
        expect(response.body.error.code).toBe("unauthorized");
      }
    }
    expect({ target: await objectRecord(target.id), other: await objectRecord(other.id) }).toEqual(before);
  });

  it("fences a replayed token of the previous attempt with 409 stale_attempt: recorded in the history, state unchanged", async () => {
    const before = await objectRecord(target.id);
    for (const action of ACTIONS) {
      const response = await callTask(target.previous, action, BODIES[action]);
      expect(response.status, action).toBe(409);
      expect(response.body.error.code).toBe("stale_attempt");
    }
    const after = await objectRecord(target.id);
    expect({ ...after, events: [] }).toEqual({ ...before, events: [] });
    expect(after.events!.slice(before.events!.length)).toEqual(
      ACTIONS.map((_, i) => ({ seq: before.events!.at(-1)!.seq + 1 + i, type: "stale_report_rejected", step_id: "render", attempt: 1 })),
    );
  });

  it("accepts the genuine token of the current attempt with 200, then fences every token of the ended step with 410", async () => {
    expect(await callTask(target.current, "heartbeat", { progress: { percent: 50 } })).toEqual({ status: 200, body: { cancelRequested: false } });
    expect(await callTask(target.current, "complete", { output: { url: "https://cdn.example/r.png" } })).toEqual({ status: 200, body: { ok: true } });
    const workflow = await waitForStatus(target.id, "completed");
    expect(workflow.output).toEqual({ render: { url: "https://cdn.example/r.png" } });

    const ended = await objectRecord(target.id);
    for (const token of [target.current, target.previous]) {
      for (const action of ACTIONS) {
        const response = await callTask(token, action, BODIES[action]);
        expect(response.status, action).toBe(410);
        expect(response.body.error.code).toBe("gone");
      }
    }
    expect(await objectRecord(target.id)).toEqual(ended);
    expect((await historyOf(target.id)).filter((event) => event.type === "workflow_completed")).toHaveLength(1);
    // The other workflow's own token still works for it alone.
    expect((await callTask(other.token, "complete", { output: { other: true } })).status).toBe(200);
    expect((await waitForStatus(other.id, "completed")).output).toEqual({ render: { other: true } });
    expect((await api("GET", `/v1/workflows/${target.id}`)).body.output).toEqual({ render: { url: "https://cdn.example/r.png" } });
  });

  it("signs with the deployment's secret only: a token the test signs with it is genuine (the control for the forgeries)", async () => {
    const { expiresAt } = (await tokenClaims(target.current))!;
    const token = await signTaskToken({ tenant: "default", workflowId: target.id, stepId: "render", attempt: 2, expiresAt }, env.TASK_TOKEN_SECRET);
    expect(token).toBe(target.current);
  });

  it("gives the remote a token that expires a grace period after its attempt's start-to-close deadline", async () => {
    const attempt = (await api("GET", `/v1/workflows/${other.id}`)).body.steps[0].attempts[0];
    expect((await tokenClaims(other.token))?.expiresAt).toBe(attempt.startedAt + 60_000 + TASK_TOKEN_GRACE_MS);
  });

  it("refuses an expired token with 401 on every task route, though genuine and current, and nothing changes", async () => {
    const claims = (await tokenClaims(other.token))!;
    // The same genuine claims, as they will be once the expiry passed: signing a past expiry moves no clock.
    const expired = await signTaskToken({ ...claims, expiresAt: Date.now() - 1 }, env.TASK_TOKEN_SECRET);
    const before = await objectRecord(other.id);
    for (const action of ACTIONS) {
      const response = await callTask(expired, action, BODIES[action]);
      expect(response.status, action).toBe(401);
      expect(response.body.error).toMatchObject({ code: "unauthorized", message: expect.stringContaining("expired") });
    }
    expect(await objectRecord(other.id)).toEqual(before);
  });
});
