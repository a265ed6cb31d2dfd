// Every new field of a definition and every new route, refused when wrong: a 4xx in the contract's error shape,
// and nothing started or changed.
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { api, bearer, snapshot, start, uniqueId, waitForStatus } from "../helpers/api";
import { REMOTE } from "../helpers/remote";
import { expectErrorShape, rawRequest } from "../helpers/routes";
import { elapse } from "../helpers/time";
import { DAY, HOUR, waitStep } from "../helpers/workflow-language";

afterEach(() => vi.restoreAllMocks());

const action = (id: string) => ({ type: "http", url: `${REMOTE}/${id}` });

function post(path: string, body: string | undefined) {
  const headers: Record<string, string> = { ...bearer() };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  return rawRequest("POST", path, { headers, ...(body === undefined ? {} : { body }) });
}

type Path = (string | number)[];

/** The issue paths of a 400's details, as JSON, for messages that show them all. */
const issuePaths = (body: { error: { details?: { path: Path }[] } }): Path[] => (body.error.details ?? []).map((issue) => issue.path);

describe("a definition with a step the workflow language does not allow", () => {
  const cases: [what: string, steps: unknown[], index: number][] = [
    ["a step with two kinds (action and sleep)", [{ id: "both", action: action("both"), sleep: { durationMs: 1000 } }], 0],
    ["a step with two kinds (sleep and waitForEvent)", [{ id: "both", sleep: { durationMs: 1000 }, waitForEvent: { event: "go", timeoutMs: 1000 } }], 0],
    ["a step with no kind", [{ id: "first", action: action("first") }, { id: "none" }], 1],
    ["a wait without timeoutMs", [{ id: "wait", waitForEvent: { event: "approved" } }], 0],
    ["a wait with a timeoutMs of 0", [{ id: "wait", waitForEvent: { event: "approved", timeoutMs: 0 } }], 0],
    ["a wait longer than a year", [{ id: "wait", waitForEvent: { event: "approved", timeoutMs: 365 * DAY + 1 } }], 0],
    ["a wait for an event name that is not an id", [{ id: "wait", waitForEvent: { event: "not an id", timeoutMs: HOUR } }], 0],
    ["a wait with an onTimeout other than fail or skip", [{ id: "wait", waitForEvent: { event: "approved", timeoutMs: HOUR, onTimeout: "retry" } }], 0],
    ["a wait with an unknown field", [{ id: "wait", waitForEvent: { event: "approved", timeoutMs: HOUR, retries: 3 } }], 0],
    ["a sleep with both durationMs and until", [{ id: "nap", sleep: { durationMs: 1000, until: "{{ input.at }}" } }], 0],
    ["a sleep with neither durationMs nor until", [{ id: "nap", sleep: {} }], 0],
    ["a sleep with a negative durationMs", [{ id: "nap", sleep: { durationMs: -1 } }], 0],
    ["a sleep longer than a year", [{ id: "nap", sleep: { durationMs: 365 * DAY + 1 } }], 0],
    ["a sleep until a literal that is not a time", [{ id: "nap", sleep: { until: "next tuesday" } }], 0],
    ["a sleep until a template reading a step that is not upstream", [{ id: "nap", sleep: { until: "{{ steps.later.output.at }}" } }, { id: "later", action: action("later") }], 0],
    ["a when reading a step that is not upstream", [{ id: "first", when: "{{ steps.second.output.ok }}", action: action("first") }, { id: "second", action: action("second") }], 0],
    ["a when reading a step that does not exist", [{ id: "first", action: action("first") }, { id: "gated", when: "{{ steps.ghost.output.ok }}", action: action("gated") }], 1],
    ["a when reading a parallel step", [{ id: "left", dependsOn: [], action: action("left") }, { id: "right", dependsOn: [], when: "{{ steps.left.output.ok }}", action: action("right") }], 1],
    ["a when that is not a string", [{ id: "gated", when: true, action: action("gated") }], 0],
  ];

  it.each(cases)("is refused with 400 naming the step (%s), and starts nothing", async (_what, steps, index) => {
    const id = uniqueId("bad-definition");
    const response = await post("/v1/workflows", JSON.stringify({ id, definition: { name: "bad", steps } }));

    expectErrorShape(response, 400, "validation_failed");
    const paths = issuePaths(response.body);
    expect(
      paths.some((path) => path[0] === "definition" && path[1] === "steps" && path[2] === index),
      `no issue at definition.steps.${index}: ${JSON.stringify(paths)}`,
    ).toBe(true);
    expect((await api("GET", `/v1/workflows/${id}`)).status).toBe(404);
  });

  it("names the step's id in the message when it has two kinds or none", async () => {
    for (const step of [{ id: "two-kinds", action: action("x"), waitForEvent: { event: "go", timeoutMs: HOUR } }, { id: "no-kind" }]) {
      const response = await post("/v1/workflows", JSON.stringify({ id: uniqueId("bad-kind"), definition: { name: "bad", steps: [step] } }));
      expectErrorShape(response, 400, "validation_failed");
      expect(JSON.stringify(response.body.error), step.id).toContain(step.id);
    }
  });
});

/** Bodies each route must refuse, and what the refusal must be. */
type BadBody = [what: string, body: string | undefined, status: number | number[], code: string | RegExp];

const tooBig = "x".repeat(128 * 1024 + 1);

const EVENT_BODIES: BadBody[] = [
  // No body and no Content-Type: either "not JSON" or "no event" is a fair answer.
  ["no body", undefined, [400, 415], /^(validation_failed|invalid_json|unsupported_media_type)$/],
  ["a body that is not JSON", "{event: approved}", 400, "invalid_json"],
  ["no event", JSON.stringify({ payload: { ok: true } }), 400, "validation_failed"],
  ["an unknown field", JSON.stringify({ event: "approved", payload: {}, sender: "ops" }), 400, "validation_failed"],
  ["an event name that is not an id", JSON.stringify({ event: "not approved" }), 400, "validation_failed"],
  ["an event name that is not a string", JSON.stringify({ event: 7 }), 400, "validation_failed"],
  ["an event name too long", JSON.stringify({ event: "a".repeat(129) }), 400, "validation_failed"],
  ["an id that is not an id", JSON.stringify({ event: "approved", id: "-dup" }), 400, "validation_failed"],
  ["a payload over 128 KiB", JSON.stringify({ event: "approved", payload: { blob: tooBig } }), 400, "validation_failed"],
  ["a payload nested too deep", `{"event":"approved","payload":${"[".repeat(100)}${"]".repeat(100)}}`, 400, "validation_failed"],
];

const TERMINATE_BODIES: BadBody[] = [
  ["a body that is not JSON", "reason=none", 400, "invalid_json"],
  ["an unknown field", JSON.stringify({ reason: "stop", force: true }), 400, "validation_failed"],
  ["a reason that is not a string", JSON.stringify({ reason: 42 }), 400, "validation_failed"],
  ["a reason over 1024 characters", JSON.stringify({ reason: "r".repeat(1025) }), 400, "validation_failed"],
];

const REDRIVE_BODIES: BadBody[] = [
  ["a body that is not JSON", "{fromStep}", 400, "invalid_json"],
  ["an unknown field", JSON.stringify({ fromStep: "approval", resetAll: true }), 400, "validation_failed"],
  ["a fromStep that is not an id", JSON.stringify({ fromStep: "not a step" }), 400, "validation_failed"],
  ["a fromStep that is not a string", JSON.stringify({ fromStep: ["approval"] }), 400, "validation_failed"],
];

describe("the new routes with a body they must refuse", () => {
  let waiting: string;
  let failed: string;

  beforeAll(async () => {
    // A workflow an accepted event would complete and a terminate would end; one a redrive would start again.
    waiting = (await start({ name: "bad-bodies", steps: [waitStep("approval", { event: "approved", timeoutMs: DAY })] })).id;
    failed = (await start({ name: "bad-redrive", onFailure: "fail", steps: [waitStep("approval", { event: "approved", timeoutMs: HOUR })] })).id;
    await elapse(failed, HOUR);
    await waitForStatus(failed, "failed");
  });

  const routes: [route: string, target: () => string, bodies: BadBody[]][] = [
    ["events", () => waiting, EVENT_BODIES],
    ["terminate", () => waiting, TERMINATE_BODIES],
    ["redrive", () => failed, REDRIVE_BODIES],
  ];

  describe.each(routes)("POST /v1/workflows/{id}/%s", (route, target, bodies) => {
    it.each(bodies)("refuses %s with a 4xx error, changing nothing", async (what, body, status, code) => {
      const id = target();
      const before = await snapshot("default", id);

      const response = await post(`/v1/workflows/${id}/${route}`, body);

      expectErrorShape(response, status, code, what);
      expect(await snapshot("default", id)).toEqual(before);
    });

    it("answers 404 for a workflow that does not exist", async () => {
      const response = await post(`/v1/workflows/${uniqueId("missing")}/${route}`, route === "events" ? JSON.stringify({ event: "approved" }) : "{}");
      expectErrorShape(response, 404, "not_found");
    });
  });

  describe.each(["pause", "resume"])("POST /v1/workflows/{id}/%s", (route) => {
    it("answers 404 for a workflow that does not exist", async () => {
      expectErrorShape(await post(`/v1/workflows/${uniqueId("missing")}/${route}`, undefined), 404, "not_found");
    });

  });
});
