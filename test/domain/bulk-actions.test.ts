// The pure side of a bulk job: the request's validation, the call each workflow gets, how an answer counts, and how
// an action that may have landed is recognised in a workflow's history.
import { describe, expect, it } from "vitest";
import { actionLanded, bulkCallOf, outcomeOf } from "../../src/domain/bulk/actions";
import type { BulkJobSpec } from "../../src/domain/bulk/job";
import { BulkRequestSchema } from "../../src/domain/bulk/request";

const spec = (fields: Partial<BulkJobSpec>): BulkJobSpec => ({ id: "job-1", tenant: "t", action: "cancel", filter: { name: "n" }, actor: "t", createdAt: 0, ...fields });

describe("a bulk request", () => {
  const accepted: [string, unknown][] = [
    ["a name", { action: "cancel", filter: { name: "orders" } }],
    ["a status and a reason", { action: "terminate", filter: { status: "running" }, reason: "stuck" }],
    ["an explicit all: every workflow created before now", { action: "pause", filter: { createdBefore: 1_800_000_000_000 } }],
    ["a created range", { action: "resume", filter: { createdAfter: 1, createdBefore: 2 } }],
    ["ids", { action: "redrive", filter: { ids: ["a", "b"] } }],
    ["a parent", { action: "cancel", filter: { parentId: "p" } }],
    ["an id prefix", { action: "cancel", filter: { idPrefix: "order-" } }],
    ["an event with action event", { action: "event", filter: { name: "n" }, event: { event: "go", payload: { n: 1 } } }],
  ];
  it.each(accepted)("is accepted with %s", (_what, body) => {
    expect(BulkRequestSchema.safeParse(body).success).toBe(true);
  });

  const refused: [string, unknown, string][] = [
    ["an empty filter", { action: "cancel", filter: {} }, "filter"],
    ["an empty range", { action: "cancel", filter: { createdAfter: 5, createdBefore: 5 } }, "filter.createdAfter"],
    ["an event for another action", { action: "pause", filter: { name: "n" }, event: { event: "go" } }, "event"],
    ["action event without its event", { action: "event", filter: { name: "n" } }, "event"],
    ["1 001 ids", { action: "cancel", filter: { ids: Array.from({ length: 1_001 }, (_, i) => `w${i}`) } }, "filter.ids"],
    ["an id prefix no id begins with", { action: "cancel", filter: { idPrefix: "-order" } }, "filter.idPrefix"],
  ];
  it.each(refused)("is refused with %s, at its path", (_what, body, path) => {
    const parsed = BulkRequestSchema.safeParse(body);
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues.map((issue) => issue.path.join("."))).toContain(path);
  });
});

describe("the call a bulk job makes on each workflow", () => {
  const calls: [string, Partial<BulkJobSpec>, unknown][] = [
    ["cancel, by the job's creator", { action: "cancel" }, { kind: "command", call: { command: "cancel" }, by: { actor: "ops-bot" } }],
    ["pause, with the job's reason", { action: "pause", reason: "maintenance" }, { kind: "command", call: { command: "pause" }, by: { actor: "ops-bot", reason: "maintenance" } }],
    ["resume", { action: "resume" }, { kind: "command", call: { command: "resume" }, by: { actor: "ops-bot" } }],
    ["redrive (everything that did not succeed)", { action: "redrive" }, { kind: "command", call: { command: "redrive" }, by: { actor: "ops-bot" } }],
    ["terminate, its reason with who acted", { action: "terminate", reason: "why" }, { kind: "command", call: { command: "terminate" }, by: { actor: "ops-bot", reason: "why" } }],
    ["an event, deduped by the job's id", { action: "event", event: { event: "go" } }, { kind: "event", event: { event: "go", id: "bulk:job-1" }, by: { actor: "ops-bot" } }],
    ["an event, deduped by the sender's own id", { action: "event", event: { event: "go", id: "mine" } }, { kind: "event", event: { event: "go", id: "mine" }, by: { actor: "ops-bot" } }],
    ["an event's own reason before the job's", { action: "event", reason: "job", event: { event: "go", reason: "own" } }, { kind: "event", event: { event: "go", id: "bulk:job-1" }, by: { actor: "ops-bot", reason: "own" } }],
  ];
  it.each(calls)("is %s", (_what, fields, call) => {
    expect(bulkCallOf(spec({ actor: "ops-bot", ...fields }))).toEqual(call);
  });

  it("counts a refusal as failed with its code and message, and anything accepted as done", () => {
    expect(outcomeOf({ ok: true })).toEqual({ done: true });
    expect(outcomeOf({ ok: true, unchanged: true })).toEqual({ done: true });
    expect(outcomeOf({ ok: false, code: "conflict", message: "workflow has already ended (completed)" })).toEqual({ done: false, error: { code: "conflict", message: "workflow has already ended (completed)" } });
  });
});

describe("an action that may have landed", () => {
  const by = { actor: "ops-bot", reason: "bad release" };
  const history = [
    { at: 100, type: "workflow_started" },
    { at: 200, type: "operator_action", data: { action: "compensate", ...by } },
    { at: 300, type: "workflow_paused", data: by },
    { at: 400, type: "operator_action", data: { action: "cancel", ...by } },
    { at: 500, type: "workflow_resumed", data: { pausedMs: 200, actor: "someone-else" } },
  ];
  const rows: [string, BulkJobSpec["action"], number, boolean | undefined][] = [
    ["a cancel by the job since then", "cancel", 350, true],
    ["a cancel only before then", "cancel", 450, false],
    ["another operator action is not a cancel", "cancel", 150, true],
    ["a pause since then", "pause", 300, true],
    ["a resume by another actor", "resume", 0, false],
    ["an event (its dedupe id decides instead)", "event", 0, undefined],
  ];
  it.each(rows)("is recognised from %s", (_what, action, since, landed) => {
    expect(actionLanded(action, by, history, since)).toBe(landed);
  });

  it("is not a compensate taken for a cancel, nor the same action with another reason", () => {
    expect(actionLanded("cancel", by, history.slice(0, 3), 0)).toBe(false);
    expect(actionLanded("cancel", { actor: "ops-bot", reason: "another" }, history, 0)).toBe(false);
  });
});
