import { exports } from "cloudflare:workers";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { api, bearer, uniqueId, type ApiResponse } from "../helpers/api";
import { httpStep, json, mockRemote, REMOTE } from "../helpers/remote";

// A request the API wrongly accepts would start a workflow; the fake remote keeps it off the network.
beforeEach(() => {
  mockRemote(() => json({ ok: true }));
});
afterEach(() => vi.restoreAllMocks());

type Path = (string | number)[];

function definitionWith(steps: unknown[], extra: Record<string, unknown> = {}) {
  return { name: "validation", steps, ...extra };
}

/** Sends a raw body with a chosen Content-Type, for requests the JSON helper cannot make. */
async function send(method: string, path: string, body: string, contentType: string): Promise<ApiResponse> {
  const response = await exports.default.fetch(`http://shepherd.test${path}`, { method, body, headers: { "Content-Type": contentType, ...bearer() } });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined };
}

/** Enough of a response to explain a failure without printing a megabyte of input. */
function summary(response: ApiResponse): string {
  return JSON.stringify(response.body)?.slice(0, 500) ?? "(no body)";
}

function expectErrorShape(response: ApiResponse, status: number, code?: string) {
  expect(response.status, summary(response)).toBe(status);
  expect(response.body.error.code).toMatch(code ?? /^[a-z]+(_[a-z]+)*$/);
  expect(response.body.error.message).toEqual(expect.any(String));
  expect(response.body.error.message.length).toBeGreaterThan(0);
}

/** The contract's 400: `validation_failed` with the zod issues, one of them at `path`. */
function expectValidationIssue(response: ApiResponse, path: Path, message?: RegExp) {
  expectErrorShape(response, 400, "validation_failed");
  const details: { path: Path; message: string }[] = response.body.error.details;
  expect(details.length).toBeGreaterThan(0);
  expect(details.map((issue) => issue.path)).toContainEqual(path);
  if (message) {
    const atPath = details.filter((issue) => JSON.stringify(issue.path) === JSON.stringify(path));
    expect(atPath.map((issue) => issue.message)).toContainEqual(expect.stringMatching(message));
  }
}

async function expectNoWorkflow(id: string) {
  const response = await api("GET", `/v1/workflows/${id}`);
  expectErrorShape(response, 404, "not_found");
}

interface DefinitionCase {
  name: string;
  definition: unknown;
  path: Path;
  message?: RegExp;
}

const definitionCases: DefinitionCase[] = [
  {
    name: "a dependency cycle, naming the step and the cycle",
    definition: definitionWith([httpStep("a", { dependsOn: ["b"] }), httpStep("b", { dependsOn: ["a"] })]),
    path: ["definition", "steps", 0, "dependsOn"],
    message: /cycle.*a -> b -> a/,
  },
  {
    name: "a step that depends on itself",
    definition: definitionWith([httpStep("a", { dependsOn: ["a"] })]),
    path: ["definition", "steps", 0, "dependsOn", 0],
    message: /"a"/,
  },
  {
    name: "an unknown dependsOn, naming the dependency",
    definition: definitionWith([httpStep("a"), httpStep("b", { dependsOn: ["a", "ghost"] })]),
    path: ["definition", "steps", 1, "dependsOn", 1],
    message: /"ghost"/,
  },
  {
    name: "a duplicate step id",
    definition: definitionWith([httpStep("a"), httpStep("b"), httpStep("a")]),
    path: ["definition", "steps", 2, "id"],
    message: /duplicate.*"a"/,
  },
  {
    name: "a step id that breaks the id format",
    definition: definitionWith([httpStep("has space")]),
    path: ["definition", "steps", 0, "id"],
  },
  {
    name: "a step id that starts with a dash",
    definition: definitionWith([httpStep("-a")]),
    path: ["definition", "steps", 0, "id"],
  },
  {
    name: "a definition name that breaks the id format",
    definition: { name: "no/slashes", steps: [httpStep("a")] },
    path: ["definition", "name"],
  },
  {
    name: "a definition without steps",
    definition: { name: "validation" },
    path: ["definition", "steps"],
  },
  {
    name: "a definition with an empty list of steps",
    definition: definitionWith([]),
    path: ["definition", "steps"],
  },
  {
    name: "more than 200 steps",
    definition: definitionWith(Array.from({ length: 201 }, (_, index) => httpStep(`s${index}`))),
    path: ["definition", "steps"],
  },
  {
    name: "an action without a url",
    definition: definitionWith([{ id: "a", action: { type: "http" } }]),
    path: ["definition", "steps", 0, "action", "url"],
  },
  {
    name: "an unknown field in a step",
    definition: definitionWith([httpStep("a", { colour: "blue" })]),
    path: ["definition", "steps", 0],
    message: /colour/,
  },
  {
    name: "an unknown field in an action",
    definition: definitionWith([{ id: "a", action: { type: "http", url: `${REMOTE}/a`, verb: "POST" } }]),
    path: ["definition", "steps", 0, "action"],
    message: /verb/,
  },
  {
    name: "an unknown field in the definition",
    definition: definitionWith([httpStep("a")], { retries: 3 }),
    path: ["definition"],
    message: /retries/,
  },
  {
    name: "a template that reads a step which is not upstream",
    definition: definitionWith([
      httpStep("a"),
      { id: "b", dependsOn: [], action: { type: "http", url: `${REMOTE}/b`, body: { ref: "{{ steps.a.output.id }}" } } },
    ]),
    path: ["definition", "steps", 1, "action"],
    message: /steps\.a\.output\.id.*upstream/,
  },
  {
    name: "a template that reads a later step",
    definition: definitionWith([
      { id: "a", action: { type: "http", url: `${REMOTE}/a`, body: { ref: "{{ steps.b.output }}" } } },
      httpStep("b"),
    ]),
    path: ["definition", "steps", 0, "action"],
    message: /"b"/,
  },
  {
    name: "a retry policy with no attempts",
    definition: definitionWith([httpStep("a", { retry: { maxAttempts: 0 } })]),
    path: ["definition", "steps", 0, "retry", "maxAttempts"],
  },
  {
    name: "a fractional number of attempts",
    definition: definitionWith([httpStep("a", { retry: { maxAttempts: 2.5 } })]),
    path: ["definition", "steps", 0, "retry", "maxAttempts"],
  },
  {
    name: "a jitter above 1",
    definition: definitionWith([httpStep("a", { retry: { jitter: 1.5 } })]),
    path: ["definition", "steps", 0, "retry", "jitter"],
  },
  {
    name: "a backoff coefficient below 1",
    definition: definitionWith([httpStep("a", { retry: { backoffCoefficient: 0.5 } })]),
    path: ["definition", "steps", 0, "retry", "backoffCoefficient"],
  },
  {
    name: "a negative initial retry interval",
    definition: definitionWith([httpStep("a", { retry: { initialIntervalMs: -1 } })]),
    path: ["definition", "steps", 0, "retry", "initialIntervalMs"],
  },
  {
    name: "a zero heartbeat timeout",
    definition: definitionWith([httpStep("a", { timeouts: { heartbeatMs: 0 } })]),
    path: ["definition", "steps", 0, "timeouts", "heartbeatMs"],
  },
  {
    name: "a start-to-close timeout longer than a week",
    definition: definitionWith([httpStep("a", { timeouts: { startToCloseMs: 604_800_001 } })]),
    path: ["definition", "steps", 0, "timeouts", "startToCloseMs"],
  },
  {
    name: "an out-of-range default retry policy",
    definition: definitionWith([httpStep("a")], { defaults: { retry: { maxAttempts: 101 } } }),
    path: ["definition", "defaults", "retry", "maxAttempts"],
  },
  {
    name: "an unknown onFailure",
    definition: definitionWith([httpStep("a")], { onFailure: "retry-forever" }),
    path: ["definition", "onFailure"],
  },
  {
    name: "a target URL with userinfo",
    definition: definitionWith([{ id: "a", action: { type: "http", url: "https://user:pw@x.example/" } }]),
    path: ["definition", "steps", 0, "action", "url"],
    message: /userinfo|credentials/,
  },
  {
    name: "a compensation URL with userinfo",
    definition: definitionWith([{ id: "a", action: { type: "http", url: `${REMOTE}/a` }, compensate: { type: "http", url: "https://user@x.example/undo" } }]),
    path: ["definition", "steps", 0, "compensate", "url"],
    message: /userinfo|credentials/,
  },
  {
    name: "a target URL that is neither https nor http",
    definition: definitionWith([{ id: "a", action: { type: "http", url: "ftp://files.example/a" } }]),
    path: ["definition", "steps", 0, "action", "url"],
  },
  {
    name: "a target URL that is not absolute",
    definition: definitionWith([{ id: "a", action: { type: "http", url: "/relative/path" } }]),
    path: ["definition", "steps", 0, "action", "url"],
  },
];

describe("POST /v1/workflows with an invalid definition", () => {
  it.each(definitionCases)("refuses $name with 400 and creates nothing", async ({ definition, path, message }) => {
    const id = uniqueId("invalid");
    const response = await api("POST", "/v1/workflows", { id, definition });

    expectValidationIssue(response, path, message);
    await expectNoWorkflow(id);
  });

  it("names the refused URL's path in the error message itself, not only in the details", async () => {
    const response = await api("POST", "/v1/workflows", {
      id: uniqueId("invalid"),
      definition: definitionWith([{ id: "a", action: { type: "http", url: "https://user:pw@x.example/" } }]),
    });
    expect(response.status).toBe(400);
    expect(response.body.error.message).toContain("definition.steps.0.action.url");
  });
});

describe("POST /v1/workflows with an invalid body", () => {
  it("refuses a body without a definition", async () => {
    const id = uniqueId("invalid");
    const response = await api("POST", "/v1/workflows", { id, input: { amount: 1 } });

    expectValidationIssue(response, ["definition"]);
    await expectNoWorkflow(id);
  });

  it("refuses an unknown top-level field, naming it", async () => {
    const id = uniqueId("invalid");
    const response = await api("POST", "/v1/workflows", { id, definition: definitionWith([httpStep("a")]), urgency: "high" });

    expectValidationIssue(response, [], /urgency/);
    await expectNoWorkflow(id);
  });

  it.each([
    ["that starts with a dash", "-leading-dash"],
    ["with a space", "has space"],
    ["with a slash", "a/b"],
    ["of 129 characters", "a".repeat(129)],
    ["that is empty", ""],
  ])("refuses a workflow id %s", async (_name, id) => {
    const response = await api("POST", "/v1/workflows", { id, definition: definitionWith([httpStep("a")]) });

    expectValidationIssue(response, ["id"]);
  });

  it.each([
    ["null", "null"],
    ["an array", "[]"],
    ["a string", '"start please"'],
  ])("refuses %s as the body", async (_name, body) => {
    const response = await send("POST", "/v1/workflows", body, "application/json");

    expectValidationIssue(response, []);
  });

  it("answers malformed JSON with 400 invalid_json", async () => {
    const id = uniqueId("invalid");
    const response = await send("POST", "/v1/workflows", `{"id": "${id}", "definition": {"name": "x", "steps": [`, "application/json");

    expectErrorShape(response, 400, "invalid_json");
    await expectNoWorkflow(id);
  });

  it.each(["text/plain", "application/json-patch+json", "application/jsonl"])("answers a %s body with 415", async (contentType) => {
    const id = uniqueId("invalid");
    const body = JSON.stringify({ id, definition: definitionWith([httpStep("a")]) });
    const response = await send("POST", "/v1/workflows", body, contentType);

    expectErrorShape(response, 415);
    await expectNoWorkflow(id);
  });

  it("accepts application/json with parameters", async () => {
    const id = uniqueId("charset");
    const body = JSON.stringify({ id, definition: definitionWith([httpStep("a")]) });
    expect((await send("POST", "/v1/workflows", body, "application/json; charset=utf-8")).status).toBe(201);
  });
});

describe("the limits of a start request", () => {
  it("case 19 (oversized payload): refuses a body over 1 MiB with 413 payload_too_large", async () => {
    const id = uniqueId("limit");
    const response = await api("POST", "/v1/workflows", { id, definition: definitionWith([httpStep("a")]), input: "x".repeat(1024 * 1024 + 1) });

    expectErrorShape(response, 413, "payload_too_large");
    await expectNoWorkflow(id);
  });

  it("case 19 (oversized payload): refuses an input over 128 KiB with a clear error", async () => {
    const id = uniqueId("limit");
    const response = await api("POST", "/v1/workflows", { id, definition: definitionWith([httpStep("a")]), input: "x".repeat(128 * 1024 + 1) });

    expect([400, 413], summary(response)).toContain(response.status);
    expectErrorShape(response, response.status, response.status === 413 ? "payload_too_large" : "validation_failed");
    await expectNoWorkflow(id);
  });

  it("never answers a deeply nested input with a 5xx", async () => {
    const id = uniqueId("limit");
    const nested = `${"[".repeat(20_000)}${"]".repeat(20_000)}`;
    const body = `{"id": "${id}", "definition": ${JSON.stringify(definitionWith([httpStep("a")]))}, "input": ${nested}}`;
    const response = await send("POST", "/v1/workflows", body, "application/json");

    expect(response.status, summary(response)).toBeLessThan(500);
  });
});

describe("requests outside the routes or the workflows that exist", () => {
  it.each([
    ["GET", "/v1/nothing-here"],
    ["GET", "/v2/workflows"],
    ["POST", "/v1/workflows/some-id/pause"],
  ])("answers %s %s with a 404 JSON error", async (method, path) => {
    const response = await api(method, path);

    expectErrorShape(response, 404, "not_found");
  });

  it("answers GET of an unknown workflow with 404 not_found", async () => {
    const response = await api("GET", `/v1/workflows/${uniqueId("unknown")}`);

    expectErrorShape(response, 404, "not_found");
  });

  it("answers the history of an unknown workflow with 404 not_found", async () => {
    const id = uniqueId("unknown");
    const response = await api("GET", `/v1/workflows/${id}/history`);

    expectErrorShape(response, 404, "not_found");
    await expectNoWorkflow(id);
  });

  it.each([
    ["cancel", "cancel", undefined],
    ["compensate", "compensate", undefined],
    ["retry a step of", "steps/charge/retry", undefined],
    ["skip a step of", "steps/charge/skip", { output: { skipped: true } }],
  ])("answers an operator's request to %s an unknown workflow with 404 and creates nothing", async (_action, route, body) => {
    const id = uniqueId("unknown");
    const response = await api("POST", `/v1/workflows/${id}/${route}`, body);

    expectErrorShape(response, 404, "not_found");
    await expectNoWorkflow(id);
  });

  it("answers malformed JSON sent to skip a step with 400 invalid_json", async () => {
    const response = await send("POST", `/v1/workflows/${uniqueId("unknown")}/steps/charge/skip`, '{"output": ', "application/json");

    expectErrorShape(response, 400, "invalid_json");
  });
});

describe("an invalid id in the path", () => {
  it.each([
    ["GET", "/v1/workflows/-bad"],
    ["GET", "/v1/workflows/has%20space"],
    ["GET", "/v1/workflows/-bad/history"],
    ["POST", "/v1/workflows/-bad/cancel"],
    ["POST", "/v1/workflows/-bad/compensate"],
  ])("answers %s %s with 400 naming the id", async (method, path) => {
    const response = await api(method, path);

    expectValidationIssue(response, ["id"]);
  });

  it.each(["retry", "skip"])("answers a %s of a step id that breaks the format with 400 naming the stepId", async (action) => {
    const response = await api("POST", `/v1/workflows/${uniqueId("path")}/steps/-bad/${action}`, action === "skip" ? {} : undefined);

    expectValidationIssue(response, ["stepId"]);
  });
});

describe("the words of a refusal", () => {
  it.each<[string, Record<string, unknown>, string]>([
    ["a misspelt onFailure lists the allowed values", { onFailure: "compensat" }, 'definition.onFailure must be one of "compensate", "escalate" or "fail"'],
    ["a missing field says it is required", { steps: [{ id: "a", action: { type: "http" } }] }, "definition.steps.0.action.url is required"],
    ["a wrong type says what goes there", { steps: [httpStep("a", { retry: { maxAttempts: "3" } })] }, "definition.steps.0.retry.maxAttempts must be a number, not a string"],
    ["an unknown action type lists the known ones", { steps: [{ id: "a", action: { type: "grpc", url: `${REMOTE}/a` } }] }, 'definition.steps.0.action.type must be one of "http" or "worker"'],
  ])("%s", async (_what, fields, sentence) => {
    const id = uniqueId("words");
    const response = await api("POST", "/v1/workflows", { id, definition: definitionWith([httpStep("a")], fields) });

    expectErrorShape(response, 400, "validation_failed");
    expect(response.body.error.message).toBe(`Invalid request: ${sentence}.`);
    expect(JSON.stringify(response.body.error.details)).not.toMatch(/Invalid input|Invalid option|expected \w+, received/);
    await expectNoWorkflow(id);
  });

  it("says a query parameter that is no number must be a number, not that it received NaN", async () => {
    const response = await api("GET", "/v1/workflows?limit=abc");

    expectValidationIssue(response, ["limit"]);
    expect(response.body.error.message).toBe("Invalid request: limit must be a number.");
  });

  it("names an unknown field of the body", async () => {
    const response = await api("POST", "/v1/workflows", { id: uniqueId("words"), definition: definitionWith([httpStep("a")]), urgency: "high" });

    expect(response.body.error.message).toBe('Invalid request: the request has an unknown field "urgency".');
  });

  it.each([
    ["GET", ""],
    ["GET", "/history"],
    ["GET", "/diagnosis"],
    ["POST", "/cancel"],
    ["POST", "/pause"],
    ["POST", "/steps/charge/retry"],
    ["POST", "/events"],
  ])("answers %s of an unknown workflow's %s with a 404 naming its id", async (method, route) => {
    const id = uniqueId("unknown");
    const response = await api(method, `/v1/workflows/${id}${route}`, route === "/events" ? { event: "approved" } : undefined);

    expectErrorShape(response, 404, "not_found");
    expect(response.body.error.message).toBe(`No workflow "${id}".`);
  });
});
