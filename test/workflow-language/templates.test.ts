// A template is either well formed or refused: a `{{` without its `}}` (or a stray `}}`) is a 400 naming the field
// when the definition is started or published, never text sent to a remote; a literal `{{` is written `{{ '{{' }}`.
import { afterEach, describe, expect, it, vi } from "vitest";
import { api, start, uniqueId, waitForStatus } from "../helpers/api";
import { FAST } from "../helpers/policies";
import { publish, read } from "../helpers/registry";
import { json, mockRemote, REMOTE } from "../helpers/remote";

afterEach(() => vi.restoreAllMocks());

/** One step posting `body` to the remote's /charge. */
const charging = (name: string, body: unknown) => ({ name, defaults: FAST, steps: [{ id: "charge", action: { type: "http", url: `${REMOTE}/charge`, body } }] });

describe("a mistyped template", () => {
  it.each([
    ["one brace short at its end", "{{ input.amount }", 'template "{{ input.amount }" is not closed by "}}"'],
    ["one brace short at its start", "{ input.amount }}", '"}}" closes no template in "{ input.amount }}"'],
    ["a {{ that is never closed", "amount {{ input.amount", 'template "{{ input.amount" is not closed by "}}"'],
  ])("is refused at start with 400 naming the field (%s), and nothing is created or called", async (_what, template, problem) => {
    const remote = mockRemote(() => json({ ok: true }));
    const id = uniqueId("mistyped");
    const response = await api("POST", "/v1/workflows", { id, definition: charging("mistyped", { amount: template }), input: { amount: 42 } });

    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe("validation_failed");
    expect(response.body.error.message).toContain("definition.steps.0.action");
    expect(response.body.error.details).toEqual([{ path: ["definition", "steps", 0, "action"], code: "custom", message: expect.stringContaining(`step "charge": ${problem}`) }]);
    expect((await api("GET", `/v1/workflows/${id}`)).status).toBe(404);
    expect(remote.calls).toHaveLength(0);
  });

  it("is refused when published, and no version is made", async () => {
    const name = uniqueId("mistyped-def");
    const response = await publish(charging(name, { amount: "{{ input.amount }" }));

    expect(response.status).toBe(400);
    expect(response.body.error.details[0]).toMatchObject({ path: ["steps", 0, "action"], message: expect.stringContaining('template "{{ input.amount }" is not closed') });
    expect((await read(`/v1/definitions/${name}`)).status).toBe(404);
  });

  it("says how to write a literal {{ or }} instead", async () => {
    const response = await api("POST", "/v1/workflows", { id: uniqueId("mistyped"), definition: charging("mistyped", { note: "{{ not a template" }) });

    expect(response.body.error.details[0].message).toContain(`for a literal "{{" write {{ '{{' }}, for "}}" write {{ '}}' }}`);
  });
});

describe("a literal {{ or }}", () => {
  it("reaches the remote as text when written as a quoted template", async () => {
    const remote = mockRemote(() => json({ ok: true }));
    const body = { greeting: "Hello {{ '{{' }}name{{ '}}' }}, you owe {{ input.amount }}", raw: '{{ "{{ input.amount }}" }}' };
    const { id } = await start(charging("literal-braces", body), { input: { amount: 42 } });
    await waitForStatus(id, "completed");

    expect(remote.callsTo("/charge")[0]?.body).toEqual({ greeting: "Hello {{name}}, you owe 42", raw: "{{ input.amount }}" });
  });
});
