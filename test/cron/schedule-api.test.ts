import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { api, bearer, uniqueId } from "../helpers/api";
import { publishNew } from "../helpers/registry";
import { createSchedule, dailySpec, getSchedule, runScheduleAlarm, scheduleAction, scheduleAlarm, storedSchedule, waitingDefinition } from "../helpers/schedules";

const every5 = (id: string, extra: Record<string, unknown> = {}) => ({ id, cron: "*/5 * * * *", workflow: { definition: waitingDefinition(), input: { report: "daily" } }, ...extra });

/** The field paths a 400 names. */
const pathsOf = (body: any): unknown[] => body.error.details.map((issue: { path: unknown[] }) => issue.path);

describe("creating a schedule", () => {
  it("answers 201 with the schedule, its defaults applied and its next fire computed", async () => {
    const id = uniqueId("s");
    const before = Date.now();

    const created = await createSchedule(every5(id));

    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ id, cron: "*/5 * * * *", timezone: "UTC", overlap: "skip", catchupWindowMs: 0, paused: false, recent: [] });
    const { nextFireAt } = created.body;
    expect(nextFireAt % (5 * 60_000)).toBe(0);
    expect(nextFireAt).toBeGreaterThan(before);
    expect(nextFireAt).toBeLessThanOrEqual(Date.now() + 5 * 60_000);
    expect(await scheduleAlarm(id)).toBe(nextFireAt);
  });

  it("answers the same body again with 200 and the same schedule, and another body for the id with 409", async () => {
    const id = uniqueId("s");
    const first = await createSchedule(every5(id));

    const again = await createSchedule(every5(id));
    const other = await createSchedule(every5(id, { overlap: "allow" }));

    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
    expect(other.status).toBe(409);
    expect(other.body.error.code).toBe("conflict");
    expect(other.body.error.message).toContain(id);
    expect((await getSchedule(id)).body.overlap).toBe("skip");
  });

  it("keeps the time zone, overlap, catch-up window and paused state it is given", async () => {
    const id = uniqueId("s");
    const created = await createSchedule(every5(id, { cron: "30 2 * * *", timezone: "Europe/Berlin", overlap: "buffer_one", catchupWindowMs: 3_600_000, paused: true }));

    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ timezone: "Europe/Berlin", overlap: "buffer_one", catchupWindowMs: 3_600_000, paused: true, nextFireAt: null });
    expect(await scheduleAlarm(id)).toBeNull();
  });

  it("takes a published definition by reference, with or without its version", async () => {
    const name = uniqueId("report");
    await publishNew(waitingDefinition(name), 1);

    const pinned = await createSchedule({ id: uniqueId("s"), cron: "0 * * * *", workflow: { definitionRef: { name, version: 1 } } });
    const latest = await createSchedule({ id: uniqueId("s"), cron: "0 * * * *", workflow: { definitionRef: { name } } });

    expect(pinned.status, JSON.stringify(pinned.body)).toBe(201);
    expect(pinned.body.workflow).toEqual({ definitionRef: { name, version: 1 } });
    expect(latest.status, JSON.stringify(latest.body)).toBe(201);
  });

  it.each([
    ["a definition that was never published", (name: string) => ({ name: `${name}-never` }), /definition "[^"]+-never"/],
    ["a version that was never published", (name: string) => ({ name, version: 2 }), /version 2 of definition/],
  ])("refuses a reference to %s with 404 naming it, and creates nothing", async (_what, ref, message) => {
    const name = uniqueId("report");
    await publishNew(waitingDefinition(name), 1);
    const id = uniqueId("s");

    const response = await createSchedule({ id, cron: "0 * * * *", workflow: { definitionRef: ref(name) } });

    expect(response.status).toBe(404);
    expect(response.body.error.code).toBe("not_found");
    expect(response.body.error.message).toMatch(message);
    expect(await storedSchedule(id)).toBeUndefined();
    expect((await getSchedule(id)).status).toBe(404);
  });

  it.each([
    ["a cron that does not parse", { cron: "every day" }, ["cron"], /cron "every day" does not parse/],
    ["a cron with a field out of range", { cron: "61 * * * *" }, ["cron"], /does not parse/],
    ["a cron that never fires", { cron: "0 0 30 2 *" }, ["cron"], /never fires/],
    ["an unknown time zone", { timezone: "Europe/Atlantis" }, ["timezone"], /time zone "Europe\/Atlantis"/],
    ["an unknown overlap policy", { overlap: "queue" }, ["overlap"], undefined],
    ["a negative catch-up window", { catchupWindowMs: -1 }, ["catchupWindowMs"], undefined],
    ["an id outside the id alphabet", { id: "-nightly" }, ["id"], undefined],
    ["an id with no room for the fire time", { id: "s".repeat(101) }, ["id"], undefined],
    ["no workflow", { workflow: undefined }, ["workflow"], undefined],
    ["both a definition and a reference", { workflow: { definition: waitingDefinition(), definitionRef: { name: "report" } } }, ["workflow"], /exactly one/],
    ["neither a definition nor a reference", { workflow: { input: {} } }, ["workflow"], /exactly one/],
    ["a definition that does not validate", { workflow: { definition: { name: "x", steps: [{ id: "a", sleep: { durationMs: 1 }, dependsOn: ["nope"] }] } } }, ["workflow", "definition", "steps", 0, "dependsOn", 0], undefined],
    ["an unknown field", { every: "day" }, [], undefined],
  ])("refuses %s with 400 naming the field, and creates nothing", async (_what, change, path, message) => {
    const id = uniqueId("bad");
    const body = { ...every5(id), ...change };

    const response = await createSchedule(body);

    expect(response.status, JSON.stringify(response.body)).toBe(400);
    expect(response.body.error.code).toBe("validation_failed");
    if (path) expect(pathsOf(response.body)).toContainEqual(path);
    if (message) expect(response.body.error.message).toMatch(message);
    const sentId = typeof body.id === "string" ? body.id : id;
    expect(await storedSchedule(sentId)).toBeUndefined();
    const listed = await env.DB.prepare("SELECT count(*) AS n FROM schedules WHERE id = ?").bind(sentId).first<{ n: number }>();
    expect(listed?.n).toBe(0);
  });

  it("refuses an inline definition calling a host the tenant may not call with 400 naming the step, and creates nothing", async () => {
    // Tenant gamma may call only *.allowed.example (vitest.config.ts).
    const id = uniqueId("s");
    const definition = { name: "outside", steps: [{ id: "call", action: { type: "http", url: "https://remote.example/call" } }] };

    const response = await createSchedule({ id, cron: "0 * * * *", workflow: { definition } }, "gamma");

    expect(response.status, JSON.stringify(response.body)).toBe(400);
    expect(response.body.error.code).toBe("validation_failed");
    expect(pathsOf(response.body)[0]).toEqual(expect.arrayContaining(["workflow", "definition", "steps", 0]));
    expect(await storedSchedule(id, "gamma")).toBeUndefined();
  });

  it("refuses a body that is not JSON with 400 invalid_json", async () => {
    const response = await api("POST", "/v1/schedules", '{"id": "s", "cron": ');
    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe("invalid_json");
  });
});

describe("reading schedules", () => {
  it("answers GET /v1/schedules/{id} with the contract's fields", async () => {
    const id = uniqueId("s");
    await createSchedule(every5(id));

    const response = await getSchedule(id);

    expect(response.status).toBe(200);
    expect(response.body).toEqual(
      expect.objectContaining({ id, cron: "*/5 * * * *", timezone: "UTC", overlap: "skip", paused: false, nextFireAt: expect.any(Number), recent: [] }),
    );
  });

  it("answers 404 for a schedule that does not exist", async () => {
    const response = await getSchedule(uniqueId("never"));
    expect(response.status).toBe(404);
    expect(response.body.error.code).toBe("not_found");
  });

  it("lists the tenant's schedules by id, a page at a time", async () => {
    const ids = ["list-b", "list-a", "list-c"];
    for (const id of ids) expect((await createSchedule(every5(id), "lister")).status).toBe(201);

    const all = await api("GET", "/v1/schedules", undefined, { headers: bearer("lister") });
    const first = await api("GET", "/v1/schedules?limit=2", undefined, { headers: bearer("lister") });
    const second = await api("GET", `/v1/schedules?limit=2&cursor=${first.body.nextCursor}`, undefined, { headers: bearer("lister") });

    expect(all.status).toBe(200);
    expect(all.body.schedules.map((s: { id: string }) => s.id)).toEqual(["list-a", "list-b", "list-c"]);
    expect(all.body.schedules[0]).toMatchObject({ cron: "*/5 * * * *", nextFireAt: expect.any(Number), recent: [] });
    expect(all.body.nextCursor).toBeUndefined();
    expect(first.body.schedules.map((s: { id: string }) => s.id)).toEqual(["list-a", "list-b"]);
    expect(second.body.schedules.map((s: { id: string }) => s.id)).toEqual(["list-c"]);
    expect(second.body.nextCursor).toBeUndefined();
  });
});

describe("tenancy", () => {
  it("hides a tenant's schedule from another: 404 for each route, an empty list, and the id free for its own", async () => {
    const id = uniqueId("tenant");
    expect((await createSchedule(every5(id), "alpha")).status).toBe(201);
    const before = await storedSchedule(id, "alpha");

    expect((await getSchedule(id, "beta")).status).toBe(404);
    for (const action of ["pause", "resume", "trigger"] as const) {
      const response = await scheduleAction(id, action, "beta");
      expect(response.status, action).toBe(404);
      expect(response.body.error.code).toBe("not_found");
    }
    expect((await api("DELETE", `/v1/schedules/${id}`, undefined, { headers: bearer("beta") })).status).toBe(404);
    const listed = await api("GET", "/v1/schedules", undefined, { headers: bearer("beta") });
    expect(listed.status).toBe(200);
    expect(listed.body.schedules).toEqual([]);

    // Nothing beta did touched alpha's schedule.
    expect(await storedSchedule(id, "alpha")).toEqual(before);
    expect((await getSchedule(id, "alpha")).status).toBe(200);
    // The same id is beta's own schedule, not a conflict with alpha's.
    const own = await createSchedule(every5(id, { overlap: "allow" }), "beta");
    expect(own.status).toBe(201);
    expect((await getSchedule(id, "alpha")).body.overlap).toBe("skip");
  });
});

describe("deleting a schedule", () => {
  it("cancels its alarm and the schedule is gone: 404 to read or act on, not listed, no fire", async () => {
    const { spec } = dailySpec(uniqueId("deleted"));
    await createSchedule(spec, "gamma");
    expect(await scheduleAlarm(spec.id, "gamma")).not.toBeNull();

    const deleted = await api("DELETE", `/v1/schedules/${spec.id}`, undefined, { headers: bearer("gamma") });

    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ id: spec.id, deleted: true });
    expect(await scheduleAlarm(spec.id, "gamma")).toBeNull();
    expect(await runScheduleAlarm(spec.id, "gamma")).toBe(false);
    expect(await storedSchedule(spec.id, "gamma")).toBeUndefined();
    expect((await getSchedule(spec.id, "gamma")).status).toBe(404);
    expect((await scheduleAction(spec.id, "trigger", "gamma")).status).toBe(404);
    expect((await api("DELETE", `/v1/schedules/${spec.id}`, undefined, { headers: bearer("gamma") })).status).toBe(404);
    const listed = await api("GET", "/v1/schedules", undefined, { headers: bearer("gamma") });
    expect(listed.body.schedules.map((s: { id: string }) => s.id)).not.toContain(spec.id);
  });
});
