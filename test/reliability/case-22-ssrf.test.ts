import { createExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import fc from "fast-check";
import { afterAll, afterEach, describe, expect, it, vi } from "vitest";
import { performHttpAction } from "../../src/agents/actions/http";
import { performTask } from "../../src/agents/perform-task";
import { createApp } from "../../src/api/app";
import type { ClaimedTask } from "../../src/domain/machine";
import { checkTarget } from "../../src/domain/security/target-policy";
import { api, bearer, uniqueId, waitForStatus } from "../helpers/api";
import { json, mockRemote } from "../helpers/remote";
import { schedulerStub } from "../helpers/scheduler";
import { FAST } from "../helpers/policies";
import { watchSends } from "../helpers/queue";

afterEach(() => vi.restoreAllMocks());

const strict = { allowPrivate: false };
const permissive = { allowPrivate: true };
/** The test configuration allows private targets (ALLOW_PRIVATE_TARGETS=true); a deployment does not. */
const deployedEnv = (): Env => ({ ...env, ALLOW_PRIVATE_TARGETS: "false" });

/** Hosts an agent must never be pointed at, in the spellings an attacker would try. */
const privateHost = fc.oneof(
  fc.tuple(fc.nat(255), fc.nat(255), fc.nat(255), fc.nat(255)).map((parts) => parts.join(".")),
  fc.constantFrom("127.0.0.1", "169.254.169.254", "10.0.0.1", "172.16.0.1", "192.168.1.1", "0.0.0.0", "0", "2130706433", "0x7f.0.0.1", "017700000001", "0177.0.0.1", "127.1", "127.000.000.001", "%31%32%37.0.0.1"),
  fc.constantFrom("[::1]", "[::]", "[::ffff:127.0.0.1]", "[::ffff:a9fe:a9fe]", "[fe80::1]", "[fd00::1]", "[0:0:0:0:0:0:0:1]", "[64:ff9b::a9fe:a9fe]"),
  fc.constantFrom("localhost", "LOCALHOST", "localhost.", "api.localhost", "metadata.google.internal", "metadata.google.internal.", "db.internal", "printer.local", "router.lan", "nas.home.arpa", "intranet", "metadata"),
);
const publicHost = fc
  .tuple(fc.stringMatching(/^[a-z][a-z0-9-]{0,12}[a-z0-9]$/), fc.constantFrom("example.com", "example.org", "payments.example.net", "shop.example"))
  .map(([label, domain]) => `${label}.${domain}`);
const port = fc.option(fc.integer({ min: 1, max: 65_535 }), { nil: undefined });
const path = fc.constantFrom("/", "/latest/meta-data/iam", "/admin?x=1", "", "/a/../b", "#frag");
const scheme = fc.constantFrom("https", "http", "HTTPS");
const userinfo = fc.constantFrom("", "user@", "user:pass@", ":@", "a%40b:c@");

const url = (s: string, u: string, host: string, p: number | undefined, rest: string) => `${s}://${u}${host}${p === undefined ? "" : `:${p}`}${rest}`;

/** Private hosts in every spelling, plus credentials or plain http on otherwise public hosts. */
const refusedUrl = fc.oneof(
  fc.tuple(scheme, userinfo, privateHost, port, path).map((parts) => url(...parts)),
  fc.tuple(fc.constantFrom("https", "http"), fc.constantFrom("user@", "user:pass@", "a:@"), publicHost, port, path).map((parts) => url(...parts)),
  fc.tuple(fc.constant("http"), fc.constant(""), publicHost, port, path).map((parts) => url(...parts)),
);

const cases = { refused: 0, accepted: 0, create: 0, redirects: 0 };
afterAll(() => {
  console.log(
    `case 22: fast-check ran ${cases.refused} refused and ${cases.accepted} accepted URL variants, ${cases.create} creates, ${cases.redirects} redirects ` +
      `(${cases.refused + cases.accepted + cases.create + cases.redirects} cases)`,
  );
});

function createRequest(body: unknown) {
  return new Request("http://shepherd.test/v1/workflows", {
    method: "POST",
    headers: { ...bearer(), "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
}

/** What an agent claims for an attempt: enough for `performHttpAction`. */
function claimedTask(url: string): ClaimedTask {
  return {
    workflowId: "ssrf",
    stepId: "a",
    attempt: 1,
    kind: "action",
    action: { type: "http", url },
    idempotencyKey: "ssrf:a",
    deadlineAt: Date.now() + 5_000,
    startToCloseMs: 5_000,
    heartbeatMs: 5_000,
  };
}

const redirectTo = (location: string) => new Response(null, { status: 302, headers: { Location: location } });

describe("case 22: SSRF", () => {
  describe("the target check (fast-check URL variants)", () => {
    it("refuses every private, loopback, link-local, IP-literal, credentialed or plain-http target", () => {
      fc.assert(
        fc.property(refusedUrl, (target) => {
          cases.refused += 1;
          expect(checkTarget(target, strict), target).toEqual(expect.any(String));
        }),
        { numRuns: 500 },
      );
    });

    it("accepts public https targets, so the refusals above are not a check that refuses everything", () => {
      fc.assert(
        fc.property(publicHost, port, path, (host, p, rest) => {
          cases.accepted += 1;
          expect(checkTarget(url("https", "", host, p, rest), strict)).toBeUndefined();
        }),
        { numRuns: 200 },
      );
    });

    it("lets private targets through only where the deployment allows them explicitly, and never credentials", () => {
      for (const target of ["http://127.0.0.1:8787/remote", "https://localhost/", "https://[::1]:9000/", "http://10.0.0.1/", "https://169.254.169.254/"]) {
        expect(checkTarget(target, permissive), target).toBeUndefined();
        expect(checkTarget(target, strict), target).toEqual(expect.any(String));
      }
      expect(checkTarget("http://admin:pw@127.0.0.1/", permissive)).toMatch(/userinfo/);
      expect(checkTarget("file:///etc/passwd", permissive)).toMatch(/only https/);
    });
  });

  describe("at create (POST /v1/workflows)", () => {
    it("answers 400 validation_failed naming the url, for actions and compensations, in a deployment without private targets", async () => {
      const app = createApp();
      const runs = 40;
      await fc.assert(
        fc.asyncProperty(refusedUrl, fc.constantFrom("action", "compensate"), async (target, field) => {
          cases.create += 1;
          const id = uniqueId("ssrf");
          const step = { id: "a", action: { type: "http", url: "https://api.example.com/ok" }, ...{ [field]: { type: "http", url: target } } };
          const response = await app.fetch(createRequest({ id, definition: { name: "ssrf", steps: [step] } }), deployedEnv(), createExecutionContext());
          expect(response.status, target).toBe(400);
          const body = (await response.json()) as { error: { code: string; details: { path: unknown[] }[] } };
          expect(body.error.code).toBe("validation_failed");
          expect(body.error.details.map((detail) => detail.path)).toContainEqual(["definition", "steps", 0, field, "url"]);
          expect((await api("GET", `/v1/workflows/${id}`)).status).toBe(404);
        }),
        { numRuns: runs },
      );
    });

    it("accepts a private target where the deployment allows it (local development and these tests)", async () => {
      const remote = mockRemote(() => json({ ok: true }));
      const id = uniqueId("local");
      const started = await api("POST", "/v1/workflows", { id, definition: { name: "local", defaults: FAST, steps: [{ id: "a", action: { type: "http", url: "http://127.0.0.1:8787/hook" } }] } });
      expect(started.status).toBe(201);
      await waitForStatus(id, "completed");
      expect(remote.calls.map((call) => call.url)).toEqual(["http://127.0.0.1:8787/hook"]);
    });
  });

  describe("at dispatch (the agent)", () => {
    it("checks every redirect again: a 302 from a public target to a private host is refused without following it", async () => {
      await fc.assert(
        fc.asyncProperty(refusedUrl, async (location) => {
          cases.redirects += 1;
          const fetchSpy = vi.spyOn(globalThis, "fetch").mockResolvedValue(redirectTo(location));
          const report = await performHttpAction(claimedTask("https://api.example.com/start"), "token", strict, new AbortController().signal);
          // The refused request is kept as the attempt's, with no answer: nothing reached the private host.
          expect(report, location).toEqual({ type: "failed", error: { message: expect.stringMatching(/^target refused: /), retryable: false, rule: "default" }, exchange: { request: expect.objectContaining({ method: "POST" }) } });
          expect(fetchSpy).toHaveBeenCalledTimes(1);
          expect(String(fetchSpy.mock.calls[0]![0])).toBe("https://api.example.com/start");
          fetchSpy.mockRestore();
        }),
        { numRuns: 150 },
      );
    });

    it("follows a redirect to a public host, and to a private one only where the deployment allows it (the controls)", async () => {
      for (const [policy, location, expected] of [
        [strict, "https://elsewhere.example.com/moved", ["https://api.example.com/start", "https://elsewhere.example.com/moved"]],
        [strict, "/moved", ["https://api.example.com/start", "https://api.example.com/moved"]],
        [permissive, "http://127.0.0.1:9000/moved", ["https://api.example.com/start", "http://127.0.0.1:9000/moved"]],
      ] as const) {
        const fetchSpy = vi.spyOn(globalThis, "fetch").mockImplementation(async (input) => (String(input).endsWith("/start") ? redirectTo(location) : json({ moved: true })));
        const report = await performHttpAction(claimedTask("https://api.example.com/start"), "token", policy, new AbortController().signal);
        expect(report).toMatchObject({ type: "succeeded", output: { moved: true }, status: 200 });
        // The attempt's request is the hop that answered.
        expect(report.exchange?.request?.url).toBe(expected[1]);
        expect(fetchSpy.mock.calls.map((call) => String(call[0]))).toEqual(expected);
        fetchSpy.mockRestore();
      }
    });

    it("refuses, in a deployed agent, a templated target that turns out private and a public one that redirects to a private host: the step fails for good", async () => {
      for (const [name, target, remoteAnswer] of [
        ["templated", "https://169.254.169.254/latest/meta-data/iam", undefined],
        ["redirected", "https://api.example.com/start", "http://10.0.0.7/internal"],
      ] as const) {
        const remote = mockRemote(() => (remoteAnswer ? redirectTo(remoteAnswer) : json({ leaked: true })));
        const id = uniqueId(name);
        const queue = watchSends((message) => message.workflowId === id);
        // A templated url cannot be checked at create; the agent checks what it renders to.
        const definition = { name, onFailure: "fail", defaults: FAST, steps: [{ id: "a", action: { type: "http", url: "{{ input.target }}" } }] };
        expect((await api("POST", "/v1/workflows", { id, definition, input: { target } })).status).toBe(201);
        const claim = await schedulerStub(id).claim("a", 1);
        expect(claim).toMatchObject({ ok: true, task: { action: { url: target } } });

        await performTask(queue.of(id)[0]!.message, (claim as unknown as { task: ClaimedTask }).task, deployedEnv());

        const workflow = await waitForStatus(id, "failed");
        expect(workflow.steps[0].attempts).toEqual([expect.objectContaining({ status: "failed", error: expect.objectContaining({ message: expect.stringMatching(/^target refused: /), retryable: false }) })]);
        expect(remote.calls.map((call) => call.url)).toEqual(remoteAnswer ? [target] : []);
        vi.restoreAllMocks();
      }
    });
  });
});
