import { describe, expect, it } from "vitest";
import type { HistoryPage } from "../../src/cli/api-types";
import { historyLines } from "../../src/cli/views/history";

const AT = Date.UTC(2026, 0, 1, 9, 30);

describe("`shepherd history`", () => {
  it("shows who acted, and why, in a column of its own, and the rest of the data beside it", () => {
    const page: HistoryPage = {
      events: [
        { seq: 1, at: AT, type: "workflow_started", data: { name: "orders" } },
        { seq: 2, at: AT, type: "operator_action", stepId: "charge", data: { action: "retry_step", actor: "alice", reason: "card updated" } },
        { seq: 3, at: AT, type: "workflow_paused", data: { actor: "ci-bot" } },
        { seq: 4, at: AT, type: "workflow_resumed", data: { pausedMs: 1200, actor: "schedule:nightly", reason: "a new fire" } },
      ],
    };

    expect(historyLines(page)).toEqual([
      "SEQ  AT                    TYPE              STEP    BY                              DATA",
      '1    2026-01-01T09:30:00Z  workflow_started                                          {"name":"orders"}',
      '2    2026-01-01T09:30:00Z  operator_action   charge  alice: "card updated"           {"action":"retry_step"}',
      "3    2026-01-01T09:30:00Z  workflow_paused           ci-bot",
      '4    2026-01-01T09:30:00Z  workflow_resumed          schedule:nightly: "a new fire"  {"pausedMs":1200}',
    ]);
  });
});
