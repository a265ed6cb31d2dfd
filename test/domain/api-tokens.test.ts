import { describe, expect, it } from "vitest";
import { parseApiTokens } from "../../src/domain/security/api-tokens";

describe("parseApiTokens", () => {
  it.each([
    { entry: "acme:s3cret", parsed: { tenant: "acme", name: "acme", token: "s3cret" }, why: "a token without a name acts under its tenant's name" },
    { entry: "acme:alice:s3cret", parsed: { tenant: "acme", name: "alice", token: "s3cret" }, why: "a named token" },
    { entry: " acme : ci-bot : s3cret ", parsed: { tenant: "acme", name: "ci-bot", token: "s3cret" }, why: "spaces around the parts are trimmed" },
    { entry: "acme:alice@example.com:s3cret", parsed: { tenant: "acme", name: "alice@example.com", token: "s3cret" }, why: "an e-mail address as the name" },
    { entry: "acme:on.call_2:s3cret", parsed: { tenant: "acme", name: "on.call_2", token: "s3cret" }, why: "dots, underscores and digits in the name" },
    { entry: "acme:abc+/~._-XYZ==", parsed: { tenant: "acme", name: "acme", token: "abc+/~._-XYZ==" }, why: "every character a bearer token may carry" },
  ])("reads $entry: $why", ({ entry, parsed }) => {
    expect(parseApiTokens(entry)).toEqual({ ok: true, entries: [parsed] });
  });

  it("reads comma-separated entries of both forms, skipping empty ones", () => {
    expect(parseApiTokens(" acme:s3cret , beta:bob:tok ,, ")).toEqual({
      ok: true,
      entries: [
        { tenant: "acme", name: "acme", token: "s3cret" },
        { tenant: "beta", name: "bob", token: "tok" },
      ],
    });
  });

  it("lets a tenant have several tokens, for rotation, and a name several too", () => {
    const parsed = parseApiTokens("acme:old,acme:new,acme:alice:a1,acme:alice:a2");
    expect(parsed.ok && parsed.entries.map(({ tenant, name }) => `${tenant}/${name}`)).toEqual(["acme/acme", "acme/acme", "acme/alice", "acme/alice"]);
  });

  it.each([undefined, "", " , "])("has no tokens for %j", (raw) => {
    expect(parseApiTokens(raw)).toEqual({ ok: true, entries: [] });
  });

  it.each([
    { raw: "no-colon", entry: 1, problem: 'is not a "tenant:token" or "tenant:name:token" entry' },
    { raw: "acme:ok,:token", entry: 2, problem: "has a tenant that does not match" },
    { raw: "acme:", entry: 1, problem: "has no token" },
    { raw: "acme:alice:", entry: 1, problem: "has no token" },
    { raw: "ac:me:x,bad tenant:y", entry: 2, problem: "has a tenant that does not match" },
    { raw: "-acme:x", entry: 1, problem: "has a tenant that does not match" },
    { raw: "acme::s3cret", entry: 1, problem: "has a name that does not match" },
    { raw: "acme:-alice:s3cret", entry: 1, problem: "has a name that does not match" },
    { raw: "acme:al ice:s3cret", entry: 1, problem: "has a name that does not match" },
    { raw: "acme:alice:tok:with:colons", entry: 1, problem: 'is not a "tenant:token" or "tenant:name:token" entry' },
    { raw: "acme:two words", entry: 1, problem: "has a token with a character a bearer token cannot carry" },
    { raw: "acme:alice:s3cr=et", entry: 1, problem: "has a token with a character a bearer token cannot carry" },
    { raw: "acme:ok,beta:tok\u00e9n", entry: 2, problem: "has a token with a character a bearer token cannot carry" },
  ])("refuses the whole setting when entry $entry of $raw is malformed", ({ raw, entry, problem }) => {
    const parsed = parseApiTokens(raw);
    expect(parsed.ok).toBe(false);
    expect(!parsed.ok && parsed.problem).toContain(`entry ${entry} ${problem}`);
  });

  it("refuses a token given to two entries, whatever their names, and never echoes a token in the problem", () => {
    const parsed = parseApiTokens("acme:alice:shared-secret,beta:shared-secret");
    expect(parsed).toEqual({ ok: false, problem: "API_TOKENS entry 2 repeats a token of an earlier entry" });
  });

  it.each(["acme:alice:s3cr et", "acme:s3cr:et:x"])("never echoes the token of a malformed entry (%s)", (raw) => {
    const parsed = parseApiTokens(raw);
    expect(!parsed.ok && parsed.problem).not.toMatch(/s3cr/);
  });
});
