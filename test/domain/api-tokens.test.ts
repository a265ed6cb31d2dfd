import { describe, expect, it } from "vitest";
import { parseApiTokens } from "../../src/domain/security/api-tokens";

describe("parseApiTokens", () => {
  it("reads comma-separated tenant:token pairs, trimming spaces and empty entries", () => {
    expect(parseApiTokens(" acme:s3cret , beta:tok:with:colons ,, ")).toEqual({
      ok: true,
      entries: [
        { tenant: "acme", token: "s3cret" },
        { tenant: "beta", token: "tok:with:colons" },
      ],
    });
  });

  it("lets a tenant have several tokens, for rotation", () => {
    const parsed = parseApiTokens("acme:old,acme:new");
    expect(parsed.ok && parsed.entries.map((entry) => entry.tenant)).toEqual(["acme", "acme"]);
  });

  it.each([undefined, "", " , "])("has no tokens for %j", (raw) => {
    expect(parseApiTokens(raw)).toEqual({ ok: true, entries: [] });
  });

  it.each([
    { raw: "no-colon", entry: 1 },
    { raw: "acme:ok,:token", entry: 2 },
    { raw: "acme:", entry: 1 },
    { raw: "ac:me:x,bad tenant:y", entry: 2 },
    { raw: "-acme:x", entry: 1 },
  ])("refuses the whole setting when entry $entry of $raw is malformed", ({ raw, entry }) => {
    const parsed = parseApiTokens(raw);
    expect(parsed.ok).toBe(false);
    expect(!parsed.ok && parsed.problem).toContain(`entry ${entry} `);
  });

  it("refuses a token given to two entries, and never echoes a token in the problem", () => {
    const parsed = parseApiTokens("acme:shared-secret,beta:shared-secret");
    expect(parsed).toEqual({ ok: false, problem: "API_TOKENS entry 2 repeats a token of an earlier entry" });
  });

  it("refuses whitespace inside a token", () => {
    expect(parseApiTokens("acme:two words").ok).toBe(false);
  });
});
