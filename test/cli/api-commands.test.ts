// The commands that send one request and show its answer, as a child process against a fake of the routes
// (support/fake-api.ts): what each sends (path, query, body, token) and what it prints, as text and with --json;
// and `watch` into a pipe, which stops at a workflow only an operator can move on instead of waiting silently.
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { buildCli } from "../../scripts/build-cli.ts";
import { FAKE_API_TOKEN, startFakeApi, type FakeApi } from "./support/fake-api";
import { runCli, scratchFiles } from "./support/run-cli";

const NOW = Date.now();

let fake: FakeApi;
let files: ReturnType<typeof scratchFiles>;

beforeAll(async () => {
  await buildCli();
  files = scratchFiles({
    "batch.yaml": `
- name: batch-one
  steps: [{ id: wait, waitForEvent: { event: go, timeoutMs: 60000 } }]
- id: batch-two
  definitionRef: { name: nightly }
`,
    "not-a-list.json": JSON.stringify({ name: "x" }),
  });
});
afterAll(() => files.remove());
beforeEach(async () => {
  fake = await startFakeApi();
});
afterEach(() => fake.close());

const shepherd = (...args: string[]) => runCli(args, { SHEPHERD_URL: fake.url, SHEPHERD_TOKEN: FAKE_API_TOKEN });

/** A workflow as the API shows it, with the fields the views read. */
function workflow(status: string, steps: { id: string; status: string; attempt?: number }[], fields: Record<string, unknown> = {}) {
  return {
    id: "order-7",
    name: "order",
    status,
    input: {},
    createdAt: NOW - 60_000,
    updatedAt: NOW,
    redriveCount: 0,
    pendingEvents: [],
    steps: steps.map((step) => ({ attempt: 1, attempts: [], ...step })),
    ...fields,
  };
}

const STUCK = workflow("needs_attention", [{ id: "reserve", status: "succeeded" }, { id: "charge", status: "failed", attempt: 3 }], { error: { message: 'step "charge" failed' } });

describe("the operator's commands for a workflow in needs_attention", () => {
  it("retries a failed step, with the reason recorded", async () => {
    fake.answer("POST /v1/workflows/order-7/steps/charge/retry", { body: workflow("running", [{ id: "charge", status: "running", attempt: 4 }]) });
    const run = await shepherd("retry-step", "order-7", "charge", "--reason", "card fixed");
    expect(run).toMatchObject({ status: 0, stdout: "retry-step order-7: running\n", stderr: "" });
    expect(fake.requests).toEqual([expect.objectContaining({ method: "POST", path: "/v1/workflows/order-7/steps/charge/retry", body: { reason: "card fixed" }, authorization: `Bearer ${FAKE_API_TOKEN}` })]);
  });

  it("skips a failed step with the output given, as JSON", async () => {
    fake.answer("POST /v1/workflows/order-7/steps/charge/skip", { body: workflow("running", [{ id: "charge", status: "skipped" }]) });
    const run = await shepherd("skip-step", "order-7", "charge", "--output", '{"charged":false}', "--reason", "paid by hand", "--json");
    expect(run.status).toBe(0);
    expect(run.json()).toMatchObject({ id: "order-7", status: "running" });
    expect(fake.requests[0]).toMatchObject({ path: "/v1/workflows/order-7/steps/charge/skip", body: { output: { charged: false }, reason: "paid by hand" } });
  });

  it("refuses an output that is not JSON before sending anything (exit 2)", async () => {
    const run = await shepherd("skip-step", "order-7", "charge", "--output", "{charged");
    expect(run.status).toBe(2);
    expect(run.stderr).toContain("--output is not JSON");
    expect(fake.requests).toEqual([]);
  });

  it("gives up and compensates, and shows the API's refusal of a workflow in another status (exit 1)", async () => {
    fake.answer("POST /v1/workflows/order-7/compensate", [
      { body: workflow("compensating", [{ id: "reserve", status: "compensating" }]) },
      { status: 409, body: { error: { code: "invalid_state", message: "Workflow order-7 is compensating; compensate needs needs_attention." } } },
    ]);
    expect(await shepherd("compensate", "order-7", "--reason", "customer gone")).toMatchObject({ status: 0, stdout: "compensate order-7: compensating\n" });
    expect(fake.requests[0]?.body).toEqual({ reason: "customer gone" });
    const again = await shepherd("compensate", "order-7");
    expect(again).toMatchObject({ status: 1, stderr: expect.stringContaining("error: invalid_state: Workflow order-7 is compensating") });
  });
});

describe("watch into a pipe", () => {
  it("stops at a workflow that needs an operator, naming the commands that move it on (exit 5)", async () => {
    fake.answer("GET /v1/workflows/order-7", { body: STUCK });
    const run = await shepherd("watch", "order-7");
    expect(run.status).toBe(5);
    expect(run.stdout).toContain("workflow order-7 (order): needs_attention, 2/2 steps settled");
    expect(run.stderr).toBe(
      [
        "workflow order-7 needs an operator: retry or skip the failed step, or compensate",
        "  shepherd retry-step order-7 charge",
        "  shepherd skip-step order-7 charge --output '<json>'",
        "  shepherd compensate order-7",
        "",
      ].join("\n"),
    );
  });

  it("stops at a paused workflow with the command that resumes it, and with --json prints the workflow as it is", async () => {
    fake.answer("GET /v1/workflows/order-7", { body: workflow("paused", [{ id: "ship", status: "pending", attempt: 0 }]) });
    const [text, json] = await Promise.all([shepherd("watch", "order-7"), shepherd("watch", "order-7", "--json")]);
    expect(text).toMatchObject({ status: 5, stderr: "workflow order-7 paused until resumed\n  shepherd resume order-7\n" });
    expect(json).toMatchObject({ status: 5, stderr: "" });
    expect(json.json()).toMatchObject({ id: "order-7", status: "paused" });
  });

  it("follows a running workflow to its end, one line per change", async () => {
    fake.answer("GET /v1/workflows/order-7", [{ body: workflow("running", [{ id: "ship", status: "running" }]) }, { body: workflow("completed", [{ id: "ship", status: "succeeded" }]) }]);
    const run = await shepherd("watch", "order-7");
    expect(run).toMatchObject({ status: 0, stderr: "" });
    expect(run.stdout).toContain("step ship: succeeded");
    expect(run.stdout).toContain("workflow order-7: completed, 1/1 steps settled");
  });

  it("gives up at --timeout on a workflow still running (exit 5)", async () => {
    fake.answer("GET /v1/workflows/order-7", { body: workflow("running", [{ id: "approve", status: "waiting" }]) });
    const run = await shepherd("watch", "order-7", "--timeout", "1s");
    expect(run).toMatchObject({ status: 5, stderr: "workflow order-7 still running after 1.0s\n" });
  });
});

describe("webhooks", () => {
  const hook = { id: "ops", url: "https://ops.example.com/hook", events: ["workflow.failed", "step.*"], createdAt: NOW, updatedAt: NOW };

  it("puts a webhook from its flags and shows the secret the service made, once", async () => {
    fake.answer("PUT /v1/webhooks/ops", { status: 201, body: { ...hook, secret: "whsec_c2VjcmV0" } });
    const run = await shepherd("webhooks", "put", "ops", "--endpoint", hook.url, "--events", "workflow.failed, step.*");
    expect(run.status).toBe(0);
    expect(run.stdout).toContain("saved webhook ops: https://ops.example.com/hook for workflow.failed, step.*");
    expect(run.stdout).toContain("secret: whsec_c2VjcmV0");
    expect(fake.requests[0]).toMatchObject({ method: "PUT", path: "/v1/webhooks/ops", body: { url: hook.url, events: ["workflow.failed", "step.*"] } });
  });

  it("needs --endpoint and --events (exit 2, nothing sent)", async () => {
    const run = await shepherd("webhooks", "put", "ops", "--endpoint", hook.url);
    expect(run).toMatchObject({ status: 2, stderr: expect.stringContaining("missing --events <types>") });
    expect(fake.requests).toEqual([]);
  });

  it("lists, gets, shows the deliveries of, and deletes a webhook", async () => {
    fake.answer("GET /v1/webhooks", { body: { webhooks: [hook] } });
    fake.answer("GET /v1/webhooks/ops", { body: hook });
    fake.answer("GET /v1/webhooks/ops/deliveries", { body: { deliveries: [{ eventId: "e1", type: "workflow.failed", workflowId: "order-7", status: "failing", attempts: 2, lastStatus: 502, firstAt: NOW, lastAt: NOW }] } });
    fake.answer("DELETE /v1/webhooks/ops", { body: { id: "ops", deleted: true } });
    const [list, get, deliveries, deleted] = await Promise.all([
      shepherd("webhooks"),
      shepherd("webhooks", "get", "ops", "--json"),
      shepherd("webhooks", "deliveries", "ops"),
      shepherd("webhooks", "delete", "ops"),
    ]);
    expect(list.stdout).toMatch(/ID\s+EVENTS\s+UPDATED\s+URL\nops\s+workflow\.failed,step\.\*/);
    expect(get.json()).toEqual(hook);
    expect(deliveries.stdout).toMatch(/workflow\.failed\s+order-7\s+failing\s+2\s+502/);
    expect(deleted).toMatchObject({ status: 0, stdout: "deleted webhook ops\n" });
  });
});

describe("the service's figures", () => {
  it("shows the metrics now", async () => {
    const timeouts = { startToClose: 1, heartbeat: 0, schedule: 0, wait: 2 };
    fake.answer("GET /v1/metrics", {
      body: {
        workflows: { byStatus: { running: 2, completed: 5 }, started: 7, ended: 5 },
        steps: { attempts: 20, retries: 3, timeouts },
        compensations: 1,
        escalations: 0,
        detectionLatenessMs: { count: 4, p50: 250, p99: 1000, max: 1200 },
        pools: [{ name: "gpu", pending: 2, oldestPendingAgeMs: 5000 }],
        asOf: NOW,
      },
    });
    const run = await shepherd("metrics");
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/workflows:\s+7 started, 5 ended/);
    expect(run.stdout).toMatch(/attempts:\s+20 \(3 retries\)/);
    expect(run.stdout).toMatch(/pools:\s+gpu 2 pending/);
  });

  it("asks for the series with --from, --to and --step in milliseconds, and refuses a range without --series", async () => {
    const point = { started: 1, completed: 1, failed: 0, compensated: 0, cancelled: 0, terminated: 0, attempts: 2, retries: 1, timeouts: {}, compensations: 0, escalations: 0, detectionLatenessMs: { count: 0, p50: null, p99: null, max: null }, queueLagMs: null };
    fake.answer("GET /v1/metrics/series", { body: { from: NOW - 300_000, to: NOW, stepMs: 300_000, series: [{ ...point, at: NOW - 300_000 }], total: point } });
    const run = await shepherd("metrics", "--series", "--from", "2026-05-01T12:00:00Z", "--to", "2026-05-01T13:00:00Z", "--step", "5m");
    expect(run.status).toBe(0);
    expect(fake.requests[0]?.query).toEqual({ from: "2026-05-01T12:00:00Z", to: "2026-05-01T13:00:00Z", stepMs: "300000" });
    expect(run.stdout).toMatch(/AT\s+STARTED\s+COMPLETED/);
    expect(run.stdout).toMatch(/total\s+1\s+1\s+0\s+2\s+1/);
    const stray = await shepherd("metrics", "--from", "2026-05-01");
    expect(stray).toMatchObject({ status: 2, stderr: expect.stringContaining("--from goes with --series") });
  });

  it("lists the target breakers, the pools and the dead letters, a page at a time", async () => {
    fake.answer("GET /v1/targets", { body: { targets: [{ host: "pay.example.com", state: "open", failures: 5, openUntil: NOW + 30_000, parked: 3 }], nextCursor: "pay.example.com" } });
    fake.answer("GET /v1/pools", { body: { pools: [{ name: "gpu", pending: 1, oldestPendingAgeMs: 4000, running: 2, workers: [{ id: "w1", lastPollAt: NOW }] }] } });
    fake.answer("GET /v1/starts/dead-letters", { body: { deadLetters: [{ messageId: "m1", tenant: "t", workflowId: "order-9", error: { code: "validation_failed", message: "steps is required" }, body: "{}", bodyTruncated: false, attempts: 1, firstSeenAt: NOW, lastSeenAt: NOW }] } });
    const [targets, pools, letters] = await Promise.all([shepherd("targets", "--limit", "1"), shepherd("pools"), shepherd("dead-letters", "--cursor", "abc")]);
    expect(targets.stdout).toMatch(/pay\.example\.com\s+open\s+5\s+3\s+in \d/);
    expect(targets.stdout).toContain("more: --cursor pay.example.com");
    expect(pools.stdout).toMatch(/gpu\s+1\s+4\.0s\s+2\s+w1/);
    expect(letters.stdout).toMatch(/order-9\s+1\s+validation_failed: steps is required/);
    expect(fake.requests.map((request) => [request.path, request.query])).toEqual(
      expect.arrayContaining([
        ["/v1/targets", { limit: "1" }],
        ["/v1/pools", {}],
        ["/v1/starts/dead-letters", { cursor: "abc" }],
      ]),
    );
  });

  it("lists workflows by id prefix and created range, each open one with why it is worth a look", async () => {
    const retrying = { id: "order-7", name: "order", status: "running", createdAt: NOW - 60_000, updatedAt: NOW - 50_000, summary: "retrying notify 2/8 after 503", stepId: "notify", attempts: { used: 2, max: 8 }, nextDeadlineAt: NOW + 590_000 };
    const done = { id: "order-6", name: "order", status: "completed", createdAt: NOW - 120_000, updatedAt: NOW - 100_000, endedAt: NOW - 100_000 };
    fake.answer("GET /v1/workflows", { body: { workflows: [retrying, done] } });

    const run = await shepherd("list", "--id-prefix", "order-", "--created-after", "2026-05-01T12:00:00Z", "--created-before", "1777636800000");

    expect(run.status).toBe(0);
    expect(fake.requests[0]?.query).toEqual({ idPrefix: "order-", createdAfter: "2026-05-01T12:00:00Z", createdBefore: "1777636800000" });
    const lines = run.stdout.split("\n");
    expect(lines[0]).toMatch(/^ID\s+NAME\s+STATUS\s+CREATED\s+ENDED\s+WHY$/);
    expect(lines[1]).toMatch(/^order-7\s+order\s+running\s+\S+Z\s+-\s+retrying notify 2\/8 after 503 · next in 9m \d\ds$/);
    expect(lines[2]).toMatch(/^order-6\s+order\s+completed\s+\S+Z\s+\S+Z$/);
  });

  it("shows the service's refusal of a filter, naming it (exit 1)", async () => {
    fake.answer("GET /v1/workflows", { status: 400, body: { error: { code: "validation_failed", message: "Invalid request: createdAfter must be epoch milliseconds or an ISO 8601 date-time with its time zone, such as 2024-05-01T12:00:00Z." } } });
    const run = await shepherd("list", "--created-after", "yesterday");
    expect(run).toMatchObject({ status: 1, stderr: expect.stringContaining("createdAfter must be epoch milliseconds") });
  });

  it("pages a map step's items, filtered by status", async () => {
    fake.answer("GET /v1/workflows/order-7/steps/thumbs/items", { body: { items: [{ index: 2, status: "failed", attempt: 3, error: { message: "declined" } }], nextCursor: "3" } });
    const run = await shepherd("items", "order-7", "thumbs", "--status", "failed");
    expect(run.stdout).toMatch(/2\s+failed\s+3\s+\{"message":"declined"\}/);
    expect(run.stdout).toContain("more: --cursor 3");
    expect(fake.requests[0]?.query).toEqual({ status: "failed" });
  });
});

describe("definitions versions", () => {
  it("lists a definition's versions, newest first, a page at a time", async () => {
    const hash = (digit: string) => digit.repeat(64);
    fake.answer("GET /v1/definitions/order/versions", {
      body: { versions: [{ name: "order", version: 3, hash: hash("c"), createdAt: NOW }, { name: "order", version: 2, hash: hash("b"), createdAt: NOW - 60_000 }], nextCursor: "2" },
    });
    const run = await shepherd("definitions", "versions", "order", "--limit", "2");
    expect(run.stdout).toMatch(/VERSION\s+HASH\s+PUBLISHED\n3\s+c{12}\s+.+\n2\s+b{12}\s+/);
    expect(run.stdout).toContain("more: --cursor 2");
    expect(fake.requests[0]).toMatchObject({ path: "/v1/definitions/order/versions", query: { limit: "2" } });
  });
});

describe("attempt", () => {
  const attempt = {
    workflowId: "order-7",
    stepId: "charge",
    n: 2,
    kind: "action",
    status: "failed",
    scheduledAt: NOW - 2_000,
    startedAt: NOW - 1_500,
    endedAt: NOW - 1_000,
    error: { message: "remote answered 503", retryable: true, status: 503, rule: "default" },
    request: { method: "POST", url: "https://pay.example/charge", headers: { authorization: "[redacted]", "idempotency-key": "order-7:charge" }, body: { text: '{"amount":42}', bytes: 13 } },
    response: { status: 503, headers: { "content-type": "application/json" }, body: { text: `{"error":"${"x".repeat(4080)}`, bytes: 9000, truncated: true } },
  };

  it("shows what the attempt sent and what came back, the JSON body pretty and the cut one marked", async () => {
    fake.answer("GET /v1/workflows/order-7/steps/charge/attempts/2", { body: attempt });
    const run = await shepherd("attempt", "order-7", "charge", "2");
    expect(run.status).toBe(0);
    expect(run.stdout).toContain("attempt: 2 of charge (action) in order-7");
    expect(run.stdout).toContain("error:   remote answered 503 (retryable: default)");
    expect(run.stdout).toContain("→ POST https://pay.example/charge\n  authorization: [redacted]\n  idempotency-key: order-7:charge\n  {\n    \"amount\": 42\n  }\n← 503\n  content-type: application/json\n");
    expect(run.stdout).toContain("  … (the first 4090 of 9000 bytes)");
    expect(fake.requests[0]?.path).toBe("/v1/workflows/order-7/steps/charge/attempts/2");
  });

  it("refuses an attempt number that is not one (exit 2, nothing sent)", async () => {
    const run = await shepherd("attempt", "order-7", "charge", "two");
    expect(run.status).toBe(2);
    expect(run.stderr).toContain('<n> must be an attempt number (1, 2, 3 …), got "two"');
    expect(fake.requests).toEqual([]);
  });
});

describe("start-batch", () => {
  it("starts every item of a list in one request, a definition as one, and exits 1 when one was refused", async () => {
    fake.answer("POST /v1/workflows/batch", {
      body: {
        results: [
          { index: 0, status: 201, workflow: workflow("running", [], { id: "wf-a", name: "batch-one" }) },
          { index: 1, status: 404, error: { code: "not_found", message: "Definition nightly not found." } },
        ],
      },
    });
    const run = await shepherd("start-batch", files.path("batch.yaml"));
    expect(run.status).toBe(1);
    expect(run.stdout).toBe("0: started wf-a (batch-one): running\n1: 404 not_found: Definition nightly not found.\n");
    expect(run.stderr).toBe("1 of 2 starts refused\n");
    expect(fake.requests[0]?.body).toEqual({ workflows: [{ definition: { name: "batch-one", steps: [{ id: "wait", waitForEvent: { event: "go", timeoutMs: 60000 } }] } }, { id: "batch-two", definitionRef: { name: "nightly" } }] });
  });

  it("refuses a file that holds no list (exit 2, nothing sent)", async () => {
    const run = await shepherd("start-batch", files.path("not-a-list.json"));
    expect(run).toMatchObject({ status: 2, stderr: expect.stringContaining("must hold a list of workflows") });
    expect(fake.requests).toEqual([]);
  });
});
