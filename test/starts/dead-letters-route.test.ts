// GET /v1/starts/dead-letters: the STARTS queue's dead letters as an operator reads them, a page at a time, each
// tenant its own, and those of messages that named no tenant of the deployment shown to its one viewer.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { STORED_BODY_MAX } from "../../src/starts/dead-letter";
import { DEAD_LETTER_RETENTION_MS, recordDeadLetter } from "../../src/starts/dead-letters-db";
import { api, bearer } from "../helpers/api";
import { deadLetterOf, deadLettersOf, deadLettersWithSettings, deliverStarts } from "../helpers/starts";

const poison = (n: number) => ({ tenant: "beta", start: { id: `poison-${n}`, definition: { name: "no-steps", steps: [] } } });

describe("GET /v1/starts/dead-letters", () => {
  it("pages through the tenant's dead letters newest first, each once", async () => {
    for (let n = 0; n < 5; n++) await deliverStarts([{ id: `m-page-${n}`, body: poison(n) }]);

    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await api("GET", `/v1/starts/dead-letters?limit=2${cursor ? `&cursor=${cursor}` : ""}`, undefined, { headers: bearer("beta") });
      expect(page.status).toBe(200);
      expect(page.body.deadLetters.length).toBeLessThanOrEqual(2);
      seen.push(...page.body.deadLetters.map((letter: { messageId: string }) => letter.messageId));
      cursor = page.body.nextCursor;
    } while (cursor);

    expect(seen).toEqual(["m-page-4", "m-page-3", "m-page-2", "m-page-1", "m-page-0"]);
  });

  it("refuses a cursor it did not hand out with a 400 naming it", async () => {
    const response = await api("GET", "/v1/starts/dead-letters?cursor=not-a-cursor");
    expect(response.status).toBe(400);
    expect(response.body.error).toMatchObject({ code: "validation_failed", details: [expect.objectContaining({ path: ["cursor"] })] });
  });

  it("shows a deployment's only tenant the dead letters of messages that named none it has, without any setting", async () => {
    await deliverStarts([{ id: "m-solo-unknown", body: { tenant: "somebody", start: poison(9).start } }], { API_TOKENS: "solo:solo-token" });

    expect((await deadLettersWithSettings("solo-token", { API_TOKENS: "solo:solo-token" })).map((letter) => letter.messageId)).toContain("m-solo-unknown");
    // With the tests' five tenants and no STARTS_DEAD_LETTER_TENANT, nobody sees them.
    expect(await deadLetterOf("m-solo-unknown", "default")).toBeUndefined();
  });

  it("keeps the body of a large message cut at 8 KiB, and says so", async () => {
    const body = { tenant: "beta", start: { definition: { name: "no-steps", steps: [] }, input: { blob: "x".repeat(20_000) } } };
    await deliverStarts([{ id: "m-large", body }]);

    const letter = await deadLetterOf("m-large", "beta");
    expect(letter).toMatchObject({ bodyTruncated: true, error: { code: "validation_failed" } });
    expect(letter!.body).toHaveLength(STORED_BODY_MAX);
    expect(JSON.stringify(body).startsWith(letter!.body)).toBe(true);
  });

  it("forgets a tenant's dead letters after 30 days, as new ones are recorded", async () => {
    const now = Date.now();
    await recordDeadLetter(env.DB, { tenant: "gamma", messageId: "m-old", body: {}, error: { code: "conflict", message: "old" }, attempts: 1, at: now - DEAD_LETTER_RETENTION_MS - 1 });
    expect((await deadLettersOf("gamma")).map((letter) => letter.messageId)).toContain("m-old");

    await deliverStarts([{ id: "m-new", body: { ...poison(10), tenant: "gamma" } }]);

    expect((await deadLettersOf("gamma")).map((letter) => letter.messageId)).toEqual(["m-new"]);
  });
});
