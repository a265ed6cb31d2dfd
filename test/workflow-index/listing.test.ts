import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { api, bearer, uniqueId } from "../helpers/api";
import { json, mockRemote, REMOTE } from "../helpers/remote";
import { FAST } from "../helpers/policies";

const asLister = { headers: bearer("lister") };

type Listed = { id: string; name: string; status: string; createdAt: number; updatedAt: number; endedAt?: number };

/**
 * A few hundred workflows of tenant "lister", in three shapes: `quick` completes, `stuck` stays running
 * (its remote accepts the work with 202 and never reports) and `refused` fails (a 400, onFailure fail).
 */
const SHAPES = {
  quick: { status: "completed", remote: () => json({ ok: true }) },
  stuck: { status: "running", remote: () => json({}, 202) },
  refused: { status: "failed", remote: () => json({ error: "no" }, 400) },
} as const;
type Shape = keyof typeof SHAPES;
const COUNTS: Record<Shape, number> = { quick: 150, stuck: 60, refused: 40 };
const started: { id: string; shape: Shape }[] = [];

function definition(shape: Shape) {
  return {
    name: `list-${shape}`,
    onFailure: "fail",
    defaults: { ...FAST, timeouts: { ...FAST.timeouts, heartbeatMs: 600_000, startToCloseMs: 600_000 } },
    steps: [{ id: "only", action: { type: "http", url: `${REMOTE}/${shape}` } }],
  };
}

async function list(query: string): Promise<{ workflows: Listed[]; nextCursor?: string }> {
  const response = await api("GET", `/v1/workflows${query}`, undefined, asLister);
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return response.body;
}

/** Every page of a query, following nextCursor; bounded so a cursor loop fails instead of hanging. */
async function listAll(query: string, limit: number): Promise<{ workflows: Listed[]; pages: number }> {
  const workflows: Listed[] = [];
  let cursor: string | undefined;
  for (let pages = 1; pages <= 1_000; pages++) {
    const separator = query ? "&" : "?";
    const page = await list(`${query}${separator}limit=${limit}${cursor ? `&cursor=${cursor}` : ""}`);
    expect(page.workflows.length).toBeLessThanOrEqual(limit);
    workflows.push(...page.workflows);
    if (!page.nextCursor) return { workflows, pages };
    cursor = page.nextCursor;
  }
  throw new Error("cursor never ended");
}

function expectNewestFirst(workflows: Listed[]) {
  for (let i = 1; i < workflows.length; i++) {
    const [a, b] = [workflows[i - 1]!, workflows[i]!];
    expect(a.createdAt > b.createdAt || (a.createdAt === b.createdAt && a.id > b.id), `${a.id} before ${b.id}`).toBe(true);
  }
}

function idsOf(shape?: Shape): string[] {
  return started.filter((workflow) => shape === undefined || workflow.shape === shape).map((workflow) => workflow.id);
}

beforeAll(async () => {
  mockRemote((call) => SHAPES[new URL(call.url).pathname.slice(1) as Shape].remote());
  const queue: Shape[] = (Object.keys(COUNTS) as Shape[]).flatMap((shape) => Array<Shape>(COUNTS[shape]).fill(shape));
  // Interleaved (7 is coprime with the total), so every page mixes shapes; started with bounded concurrency.
  const order = queue.map((_, i) => queue[(i * 7) % queue.length]!);
  for (let i = 0; i < order.length; i += 25) {
    await Promise.all(
      order.slice(i, i + 25).map(async (shape) => {
        const id = uniqueId(`list-${shape}`);
        const response = await api("POST", "/v1/workflows", { id, definition: definition(shape) }, asLister);
        expect(response.status).toBe(201);
        started.push({ id, shape });
      }),
    );
  }
  // The index follows each object closely but not instantly: wait until every final status arrived.
  await vi.waitFor(
    async () => {
      const { workflows } = await listAll("", 100);
      const statusById = new Map(workflows.map((workflow) => [workflow.id, workflow.status]));
      for (const workflow of started) expect(statusById.get(workflow.id)).toBe(SHAPES[workflow.shape].status);
    },
    { timeout: 60_000, interval: 250 },
  );
}, 120_000);

afterEach(() => vi.restoreAllMocks());

describe("GET /v1/workflows", () => {
  it("pages through all of the tenant's workflows newest first, each exactly once", async () => {
    const { workflows, pages } = await listAll("", 7);
    expect(workflows.map((workflow) => workflow.id).sort()).toEqual(idsOf().sort());
    expect(pages).toBe(Math.ceil(started.length / 7));
    expectNewestFirst(workflows);
    const triage = ["summary", "stepId", "attempts", "nextDeadlineAt"];
    for (const workflow of workflows) {
      expect(workflow).toMatchObject({ id: expect.any(String), name: expect.stringMatching(/^list-/), status: expect.any(String), createdAt: expect.any(Number), updatedAt: expect.any(Number) });
      // An ended one says when it ended, and an open one (stuck: its remote never reports) why, if it is worth a look.
      const ended = workflow.status !== "running";
      const fields = ["id", "name", "status", "createdAt", "updatedAt", ...(ended ? ["endedAt"] : triage)];
      expect(Object.keys(workflow).every((key) => fields.includes(key)), JSON.stringify(workflow)).toBe(true);
      if (ended) expect(workflow.endedAt).toEqual(expect.any(Number));
    }
  });

  it("filters by status", async () => {
    for (const shape of Object.keys(SHAPES) as Shape[]) {
      const { workflows } = await listAll(`?status=${SHAPES[shape].status}`, 40);
      expect(workflows.map((workflow) => workflow.id).sort()).toEqual(idsOf(shape).sort());
      expectNewestFirst(workflows);
    }
    expect((await list("?status=compensated")).workflows).toEqual([]);
  });

  it("filters by definition name, and by name and status together", async () => {
    const byName = await listAll("?name=list-stuck", 25);
    expect(byName.workflows.map((workflow) => workflow.id).sort()).toEqual(idsOf("stuck").sort());
    expect((await list("?name=list-stuck&status=completed")).workflows).toEqual([]);
    const both = await listAll("?name=list-quick&status=completed", 100);
    expect(both.workflows).toHaveLength(COUNTS.quick);
  });

  it("defaults to a page of 50 and leaves nextCursor out on the last page", async () => {
    const first = await list("");
    expect(first.workflows).toHaveLength(50);
    expect(first.nextCursor).toEqual(expect.any(String));
    const last = await list(`?status=failed&limit=${COUNTS.refused}`);
    expect(last.workflows).toHaveLength(COUNTS.refused);
    expect(last.nextCursor).toBeUndefined();
  });

  it("case 20 (tenancy): shows a tenant none of another tenant's workflows", async () => {
    const mine = await api("GET", "/v1/workflows?limit=100", undefined, { headers: bearer("beta") });
    expect(mine.status).toBe(200);
    const theirs = new Set(idsOf());
    expect(mine.body.workflows.filter((workflow: Listed) => theirs.has(workflow.id))).toEqual([]);
  });

  it.each([
    { query: "?limit=101", path: ["limit"] },
    { query: "?limit=0", path: ["limit"] },
    { query: "?limit=ten", path: ["limit"] },
    { query: "?status=done", path: ["status"] },
    { query: "?name=bad%20name", path: ["name"] },
    { query: "?cursor=not-a-cursor", path: ["cursor"] },
    { query: "?stauts=running", path: [] },
  ])("answers 400 validation_failed for $query", async ({ query, path }) => {
    const response = await api("GET", `/v1/workflows${query}`, undefined, asLister);
    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe("validation_failed");
    if (path.length > 0) expect(response.body.error.details.map((detail: { path: unknown[] }) => detail.path)).toContainEqual(path);
  });

  it("lists a workflow as soon as its start returns", async () => {
    mockRemote(() => json({}, 202));
    const id = uniqueId("fresh");
    await api("POST", "/v1/workflows", { id, definition: definition("stuck") }, asLister);
    expect((await list("?limit=5")).workflows.map((workflow) => workflow.id)).toContain(id);
    started.push({ id, shape: "stuck" });
    // Let its agent finish before the fake remote goes away.
    await vi.waitFor(async () => expect((await api("GET", `/v1/workflows/${id}`, undefined, asLister)).body.steps[0].status).toBe("waiting"));
  });
});
