import { afterEach, describe, expect, it, vi } from "vitest";
import { historyOf, start, waitForStatus } from "../helpers/api";
import { FAST } from "../helpers/policies";
import { json, mockRemote, REMOTE } from "../helpers/remote";
import { HOUR, sleepStep, stepOf } from "../helpers/workflow-language";

afterEach(() => vi.restoreAllMocks());

const http = (id: string, extra: Record<string, unknown> = {}, body?: unknown) => ({
  id,
  action: { type: "http", url: `${REMOTE}/${id}`, ...(body === undefined ? {} : { body }) },
  ...extra,
});

/** check → ship (only when check approved) → notify, which reads ship's output. */
const gated = {
  name: "gated",
  defaults: FAST,
  steps: [http("check"), http("ship", { when: "{{ steps.check.output.approved }}" }), http("notify", {}, { shipped: "{{ steps.ship.output }}" })],
};

function remoteApproving(approved: boolean) {
  return mockRemote((call) => {
    const path = new URL(call.url).pathname;
    if (path === "/check") return json({ approved });
    if (path === "/ship") return json({ tracking: "T-1" });
    return json({ got: call.body });
  });
}

describe("a step's when", () => {
  it("skips the step when false: output null, no remote call, the steps after it run", async () => {
    const remote = remoteApproving(false);
    const { id } = await start(gated);
    const workflow = await waitForStatus(id, "completed");

    expect(stepOf(workflow, "ship")).toMatchObject({ status: "skipped", output: null, attempts: [] });
    expect(remote.callsTo("/ship")).toHaveLength(0);
    expect(remote.callsTo("/notify")[0]?.body).toEqual({ shipped: null });
    expect(workflow.output).toMatchObject({ check: { approved: false }, ship: null });
    const history = await historyOf(id);
    expect(history.find((event) => event.type === "step_skipped")).toMatchObject({ stepId: "ship", data: { reason: "when" } });
    expect(history.some((event) => event.stepId === "ship" && event.type === "step_scheduled")).toBe(false);
  });

  it("runs the step when true", async () => {
    const remote = remoteApproving(true);
    const { id } = await start(gated);
    const workflow = await waitForStatus(id, "completed");

    expect(stepOf(workflow, "ship")).toMatchObject({ status: "succeeded", output: { tracking: "T-1" } });
    expect(remote.callsTo("/ship")).toHaveLength(1);
    expect(remote.callsTo("/notify")[0]?.body).toEqual({ shipped: { tracking: "T-1" } });
    expect((await historyOf(id)).some((event) => event.type === "step_skipped")).toBe(false);
  });

  it.each<[string, unknown, "skipped" | "succeeded"]>([
    ["false", { flag: false }, "skipped"],
    ["null", { flag: null }, "skipped"],
    ["0", { flag: 0 }, "skipped"],
    ['""', { flag: "" }, "skipped"],
    ["a missing path", {}, "skipped"],
    ["true", { flag: true }, "succeeded"],
    ["1", { flag: 1 }, "succeeded"],
    ['"no" (a non-empty string)', { flag: "no" }, "succeeded"],
    ["an empty object", { flag: {} }, "succeeded"],
  ])("reads %s from the input as %s", async (_value, input, expected) => {
    mockRemote(() => json({ ok: true }));
    const { id } = await start({ name: "when-input", defaults: FAST, steps: [http("maybe", { when: "{{ input.flag }}" }), http("after")] }, { input });
    const workflow = await waitForStatus(id, "completed");
    expect(stepOf(workflow, "maybe").status).toBe(expected);
    expect(stepOf(workflow, "after").status).toBe("succeeded");
  });

  it("skips a sleep step too, without sleeping", async () => {
    mockRemote(() => json({ ok: true }));
    const { id } = await start(
      { name: "when-sleep", defaults: FAST, steps: [sleepStep("nap", { durationMs: HOUR }, { when: "{{ input.slow }}" }), http("go")] },
      { input: { slow: false } },
    );
    const workflow = await waitForStatus(id, "completed");
    expect(stepOf(workflow, "nap")).toMatchObject({ status: "skipped", output: null });
    expect((await historyOf(id)).some((event) => event.type === "step_sleeping")).toBe(false);
  });

  it("leaves a skipped step out of compensation: only the steps that succeeded are undone", async () => {
    const remote = mockRemote((call) => {
      const path = new URL(call.url).pathname;
      if (path === "/check") return json({ approved: false });
      if (path === "/charge") return json({ error: "declined" }, 402);
      return json({ ok: true });
    });
    const undo = (id: string) => ({ compensate: { type: "http", url: `${REMOTE}/undo-${id}` } });
    const { id } = await start({
      name: "when-compensation",
      defaults: FAST,
      steps: [http("check", undo("check")), http("ship", { when: "{{ steps.check.output.approved }}", ...undo("ship") }), http("charge")],
    });
    const workflow = await waitForStatus(id, "compensated");

    expect(workflow.steps.map((step: { id: string; status: string }) => [step.id, step.status])).toEqual([
      ["check", "compensated"],
      ["ship", "skipped"],
      ["charge", "failed"],
    ]);
    expect(remote.callsTo("/undo-check")).toHaveLength(1);
    expect(remote.callsTo("/undo-ship")).toHaveLength(0);
    expect((await historyOf(id)).find((event) => event.type === "compensation_started")?.data.steps).toEqual(["check"]);
  });
});
