// GET /v1/workflows/{id}/result?waitMs=: a long poll answered by the end of the workflow (its object wakes the
// waiting request when the commit that ends it is made; nothing polls), or 202 once waitMs passes first.
import { runInDurableObject } from "cloudflare:test";
import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { WorkflowScheduler } from "../../src/workflow/object";
import type { Transitions } from "../../src/workflow/transitions";
import { api, bearer, uniqueId, waitForStatus } from "../helpers/api";
import { schedulerStub } from "../helpers/scheduler";
import { sleep } from "../helpers/time";

/** Waits for "approved": it ends when a test sends that event, or terminates it. */
const approval = { name: "awaited", steps: [{ id: "approval", waitForEvent: { event: "approved", timeoutMs: 600_000 } }] };

async function startApproval(tenant: "default" | "alpha" = "default"): Promise<string> {
  const id = uniqueId("awaited");
  const response = await api("POST", "/v1/workflows", { id, definition: approval }, { headers: bearer(tenant) });
  expect(response.status, JSON.stringify(response.body)).toBe(201);
  return id;
}

/** How many result waits the workflow's object holds now. */
function waitsHeldBy(id: string): Promise<number> {
  return runInDurableObject(schedulerStub(id), (instance: WorkflowScheduler) => (instance as unknown as { transitions: Transitions }).transitions.endWaiters.size);
}

describe("the result of a workflow", () => {
  it("is answered 200 with the output as soon as the workflow ends, woken by the end long before waitMs", async () => {
    const id = await startApproval();
    const asked = Date.now();
    let answeredAt: number | undefined;
    const answer = api("GET", `/v1/workflows/${id}/result?waitMs=60000`).then((response) => {
      answeredAt = Date.now();
      return response;
    });
    // The poll waits in the object: nothing answers it while the workflow runs.
    await expect.poll(() => waitsHeldBy(id), { timeout: 5_000, interval: 20 }).toBe(1);
    await sleep(200);
    expect(answeredAt).toBeUndefined();

    const approvedAt = Date.now();
    expect((await api("POST", `/v1/workflows/${id}/events`, { event: "approved", payload: { by: "ops" } })).status).toBe(202);
    const response = await answer;

    expect(response.status).toBe(200);
    expect(response.body).toEqual({ id, status: "completed", output: { approval: { by: "ops" } } });
    expect(answeredAt!).toBeGreaterThanOrEqual(approvedAt);
    expect(answeredAt! - asked).toBeLessThan(10_000);
    expect(await waitsHeldBy(id)).toBe(0);
  });

  it("wakes every poll waiting on the workflow, and answers a failed end with its error", async () => {
    const id = await startApproval();
    const answers = [api("GET", `/v1/workflows/${id}/result?waitMs=60000`), api("GET", `/v1/workflows/${id}/result?waitMs=45000`)];
    await expect.poll(() => waitsHeldBy(id), { timeout: 5_000, interval: 20 }).toBe(2);

    expect((await api("POST", `/v1/workflows/${id}/terminate`, { reason: "customer left" })).status).toBe(202);

    for (const response of await Promise.all(answers)) {
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ id, status: "terminated", error: { message: "customer left" } });
    }
  });

  it("is answered 202 with the status once waitMs passes first, counted from the request's arrival", async () => {
    const id = await startApproval();
    const asked = Date.now();

    const response = await api("GET", `/v1/workflows/${id}/result?waitMs=300`);

    const took = Date.now() - asked;
    expect(response.status).toBe(202);
    expect(response.body).toEqual({ id, status: "running" });
    expect(took).toBeGreaterThanOrEqual(290);
    expect(took).toBeLessThan(3_000);
    expect(await waitsHeldBy(id)).toBe(0);
  });

  it("is answered at once for a workflow that has already ended, and with waitMs=0 for one that has not", async () => {
    const id = await startApproval();
    expect((await api("GET", `/v1/workflows/${id}/result?waitMs=0`)).body).toEqual({ id, status: "running" });
    await api("POST", `/v1/workflows/${id}/events`, { event: "approved" });
    await waitForStatus(id, "completed");
    const asked = Date.now();

    const response = await api("GET", `/v1/workflows/${id}/result?waitMs=60000`);

    expect(response.status).toBe(200);
    expect(response.body).toEqual({ id, status: "completed", output: { approval: null } });
    expect(Date.now() - asked).toBeLessThan(3_000);
  });

  it("is a 404 at once for an unknown workflow, and for another tenant's", async () => {
    const others = await startApproval("alpha");
    const asked = Date.now();

    const unknown = await api("GET", `/v1/workflows/${uniqueId("nobody")}/result?waitMs=60000`);
    const notTheirs = await api("GET", `/v1/workflows/${others}/result?waitMs=60000`);

    for (const response of [unknown, notTheirs]) {
      expect(response.status).toBe(404);
      expect(response.body.error.code).toBe("not_found");
    }
    expect(Date.now() - asked).toBeLessThan(3_000);
  });

  it.each(["60001", "-1", "1.5", "soon"])("refuses waitMs=%s with a 400 naming it", async (waitMs) => {
    const id = await startApproval();

    const response = await api("GET", `/v1/workflows/${id}/result?waitMs=${waitMs}`);

    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe("validation_failed");
    expect(response.body.error.details.map((issue: { path: unknown }) => issue.path)).toContainEqual(["waitMs"]);
  });

  it("lets go of the wait when the caller goes away", async () => {
    const id = await startApproval();
    const gone = new AbortController();
    const abandoned = exports.default
      .fetch(`http://shepherd.test/v1/workflows/${id}/result?waitMs=60000`, { headers: bearer(), signal: gone.signal })
      .catch(() => undefined);
    await expect.poll(() => waitsHeldBy(id), { timeout: 5_000, interval: 20 }).toBe(1);

    gone.abort();
    await abandoned;

    await expect.poll(() => waitsHeldBy(id), { timeout: 5_000, interval: 20 }).toBe(0);
  });
});
