import { describe, expect, it } from "vitest";
import { allowedHostsFor, checkTarget, hostMatches, parseAllowedTargets } from "../../src/domain/security/target-policy";

const strict = { allowPrivate: false };
const permissive = { allowPrivate: true };

describe("checkTarget in a deployment without private targets", () => {
  it.each(["https://api.example.com/charge", "https://pay.example.co.uk:8443/v1?x=1", "https://xn--bcher-kva.example/"])("allows %s", (url) => {
    expect(checkTarget(url, strict)).toBeUndefined();
  });

  it.each([
    { url: "http://api.example.com/charge", reason: "only https URLs may be called (got http:)" },
    { url: "ftp://files.example.com/x", reason: "only https URLs may be called (got ftp:)" },
    { url: "https://user:secret@api.example.com/", reason: "URLs with credentials (userinfo) are refused" },
    { url: "https://token@api.example.com/", reason: "URLs with credentials (userinfo) are refused" },
    { url: "https://127.0.0.1/", reason: "IP literal hosts are refused (127.0.0.1)" },
    { url: "https://169.254.169.254/latest/meta-data", reason: "IP literal hosts are refused (169.254.169.254)" },
    { url: "https://10.0.0.1/", reason: "IP literal hosts are refused (10.0.0.1)" },
    { url: "https://8.8.8.8/", reason: "IP literal hosts are refused (8.8.8.8)" },
    { url: "https://[::1]/", reason: "IP literal hosts are refused ([::1])" },
    { url: "https://[::ffff:7f00:1]/", reason: "IP literal hosts are refused ([::ffff:7f00:1])" },
    { url: "https://2130706433/", reason: "IP literal hosts are refused (127.0.0.1)" },
    { url: "https://0x7f.1/", reason: "IP literal hosts are refused (127.0.0.1)" },
    { url: "https://localhost:8787/", reason: "private host names are refused (localhost)" },
    { url: "https://LOCALHOST/", reason: "private host names are refused (localhost)" },
    { url: "https://api.localhost/", reason: "private host names are refused (api.localhost)" },
    { url: "https://metadata.google.internal/", reason: "private host names are refused (metadata.google.internal)" },
    { url: "https://printer.local/", reason: "private host names are refused (printer.local)" },
    { url: "https://intranet/", reason: "private host names are refused (intranet)" },
    { url: "not a url", reason: '"not a url" is not an absolute URL' },
  ])("refuses $url", ({ url, reason }) => {
    expect(checkTarget(url, strict)).toBe(reason);
  });

  it.each(["https://localhost./", "https://metadata.google.internal./"])("refuses %s, a private name written fully qualified", (url) => {
    expect(checkTarget(url, strict)).toMatch(/^private host names are refused/);
  });
});

describe("checkTarget in a deployment that allows private targets", () => {
  it.each(["http://127.0.0.1:8787/remote", "https://localhost/", "https://[::1]:9000/", "http://10.0.0.1/", "https://db.internal/"])(
    "lets %s through",
    (url) => {
      expect(checkTarget(url, permissive)).toBeUndefined();
    },
  );

  it("still refuses credentials in the URL", () => {
    expect(checkTarget("http://admin:pw@127.0.0.1/", permissive)).toBe("URLs with credentials (userinfo) are refused");
  });

  it("still refuses schemes other than http and https", () => {
    expect(checkTarget("file:///etc/passwd", permissive)).toBe("only https URLs may be called (got file:)");
  });
});

describe("parseAllowedTargets", () => {
  it("reads JSON text and lower-cases patterns", () => {
    expect(parseAllowedTargets('{"acme": ["API.Example.com", "*.pay.example."]}')).toEqual({
      ok: true,
      value: { acme: ["api.example.com", "*.pay.example"] },
    });
  });

  it("reads an object, as a [vars] table in wrangler.toml gives it", () => {
    expect(parseAllowedTargets({ "*": ["api.example.com"] })).toEqual({ ok: true, value: { "*": ["api.example.com"] } });
  });

  it.each([undefined, null, ""])("limits no one when unset (%j)", (raw) => {
    expect(parseAllowedTargets(raw)).toEqual({ ok: true, value: {} });
  });

  it.each([
    { raw: "{not json", problem: "ALLOWED_TARGETS is not valid JSON" },
    { raw: '["api.example.com"]', problem: "ALLOWED_TARGETS must be an object, not an array" },
    { raw: '{"acme": ["https://api.example.com"]}', problem: "ALLOWED_TARGETS.acme.0 must be a host name or *.host name" },
    { raw: '{"acme": ["a.*.example"]}', problem: "ALLOWED_TARGETS.acme.0 must be a host name or *.host name" },
    { raw: '{"acme": "api.example.com"}', problem: "ALLOWED_TARGETS.acme must be an array, not a string" },
  ])("refuses $raw", ({ raw, problem }) => {
    expect(parseAllowedTargets(raw)).toEqual({ ok: false, problem });
  });
});

describe("allowedHostsFor", () => {
  const targets = { acme: ["api.acme.example"], "*": ["shared.example"] };

  it("gives a named tenant its own list and every other tenant the '*' list", () => {
    expect(allowedHostsFor(targets, "acme")).toEqual(["api.acme.example"]);
    expect(allowedHostsFor(targets, "beta")).toEqual(["shared.example"]);
  });

  it("leaves a tenant unlimited when neither it nor '*' is listed", () => {
    expect(allowedHostsFor({ acme: ["api.acme.example"] }, "beta")).toBeUndefined();
  });
});

describe("hostMatches", () => {
  it.each([
    { host: "api.example.com", patterns: ["api.example.com"], matches: true },
    { host: "API.example.com.", patterns: ["api.example.com"], matches: true },
    { host: "eu.pay.example", patterns: ["*.pay.example"], matches: true },
    { host: "a.b.pay.example", patterns: ["*.pay.example"], matches: true },
    { host: "pay.example", patterns: ["*.pay.example"], matches: false },
    { host: "evilpay.example", patterns: ["*.pay.example"], matches: false },
    { host: "api.example.com.evil.example", patterns: ["api.example.com"], matches: false },
    { host: "other.example", patterns: [], matches: false },
  ])("$host against $patterns → $matches", ({ host, patterns, matches }) => {
    expect(hostMatches(host, patterns)).toBe(matches);
  });
});

describe("checkTarget with a tenant allowlist", () => {
  const policy = { allowPrivate: false, allowedHosts: ["api.acme.example", "*.pay.example"] };

  it("allows listed hosts", () => {
    expect(checkTarget("https://api.acme.example/charge", policy)).toBeUndefined();
    expect(checkTarget("https://eu.pay.example/charge", policy)).toBeUndefined();
  });

  it("refuses a host that is fine by the SSRF rules but not listed", () => {
    expect(checkTarget("https://api.other.example/", policy)).toBe("host api.other.example is not in this tenant's ALLOWED_TARGETS");
  });

  it("still applies the SSRF rules to listed hosts", () => {
    expect(checkTarget("http://api.acme.example/", policy)).toBe("only https URLs may be called (got http:)");
  });

  it("limits a deployment that allows private targets too", () => {
    expect(checkTarget("http://127.0.0.1:8788/x", { allowPrivate: true, allowedHosts: ["127.0.0.1"] })).toBeUndefined();
    expect(checkTarget("http://localhost:8788/x", { allowPrivate: true, allowedHosts: ["127.0.0.1"] })).toMatch(/ALLOWED_TARGETS/);
  });
});
