import { afterEach, describe, expect, it, vi } from "vitest";
import { api, historyOf, start, waitForStatus } from "../helpers/api";
import { httpStep, json, mockRemote } from "../helpers/remote";

afterEach(() => vi.restoreAllMocks());

describe("GET /v1/workflows/{id}/history", () => {
  it("serves the history in pages that join up to the whole, in order", async () => {
    mockRemote(() => json({ ok: true }));
    const { id } = await start({ name: "paged", steps: [httpStep("a"), httpStep("b"), httpStep("c")] });
    await waitForStatus(id, "completed");
    const whole = await historyOf(id);
    expect(whole.map((event) => event.seq)).toEqual(whole.map((_, index) => index + 1));

    const pages: unknown[][] = [];
    let after: number | undefined;
    for (let page = 0; page < 10; page++) {
      const response = await api("GET", `/v1/workflows/${id}/history?limit=4${after === undefined ? "" : `&after=${after}`}`);
      expect(response.status).toBe(200);
      pages.push(response.body.events);
      after = response.body.nextAfter;
      if (after === undefined) break;
    }
    expect(pages.slice(0, -1).every((page) => page.length === 4)).toBe(true);
    expect(pages.flat()).toEqual(whole);
  });

  it.each(["limit=0", "limit=1001", "limit=ten", "after=-1"])("refuses %s with 400", async (query) => {
    mockRemote(() => json({ ok: true }));
    const { id } = await start({ name: "paged", steps: [httpStep("a")] });
    const response = await api("GET", `/v1/workflows/${id}/history?${query}`);
    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe("validation_failed");
    await waitForStatus(id, "completed");
  });
});
