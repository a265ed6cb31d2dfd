import { describe, expect, it } from "vitest";
import { CAPTURED_BODY_BYTES, capturedBody, capturedText, handedOutExchange, workerAnswer } from "../../src/domain/exchange/exchange";
import { isSecretName, REDACTED, redactedHeaders, redactedUrl } from "../../src/domain/security/redaction";

describe("redaction of what an attempt sent", () => {
  it.each([
    ["Authorization", true],
    ["proxy-authorization", true],
    ["Cookie", true],
    ["Shepherd-Task-Token", true],
    ["X-Api-Key", true],
    ["x-apikey", true],
    ["X-Auth-Token", true],
    ["X-Client-Secret", true],
    ["X-Hub-Signature-256", true],
    ["Idempotency-Key", false],
    ["Shepherd-Attempt", false],
    ["Content-Type", false],
    ["X-Trace-Id", false],
  ])("treats the value of %s as a secret: %s", (name, secret) => {
    expect(isSecretName(name)).toBe(secret);
  });

  it("keeps every header's name, in lower case, and replaces only secret values", () => {
    const headers = new Headers({ Authorization: "Bearer s", "X-Trace": "t-1" });
    expect(redactedHeaders(headers)).toEqual({ authorization: REDACTED, "x-trace": "t-1" });
  });

  it("cuts a long value and keeps at most 32 headers", () => {
    const many = Array.from({ length: 40 }, (_, i): [string, string] => [`x-h${i}`, "v".repeat(600)]);
    const kept = redactedHeaders(many);
    expect(Object.keys(kept)).toHaveLength(32);
    expect(kept["x-h0"]).toBe(`${"v".repeat(512)}…`);
  });

  it.each([
    ["https://api.example/charge?amount=5", "https://api.example/charge?amount=5"],
    ["https://api.example/charge?api_key=k&amount=5", "https://api.example/charge?api_key=[redacted]&amount=5"],
    ["https://api.example/x?token=a&token=b", "https://api.example/x?token=[redacted]"],
    ["https://user:pw@api.example/", "https://user:[redacted]@api.example/"],
    ["not a url", "not a url"],
  ])("redacts %s as %s", (url, kept) => {
    expect(redactedUrl(url)).toBe(kept);
  });
});

describe("a captured body", () => {
  it("keeps a small body whole", () => {
    expect(capturedText('{"ok":true}')).toEqual({ text: '{"ok":true}', bytes: 11 });
  });

  it("keeps the first 4 KiB of a larger one, its length in bytes and that it was cut", () => {
    expect(capturedText("a".repeat(5000))).toEqual({ text: "a".repeat(CAPTURED_BODY_BYTES), bytes: 5000, truncated: true });
  });

  it("never ends on half a character", () => {
    const text = `${"a".repeat(CAPTURED_BODY_BYTES - 1)}é and more`;
    const body = capturedText(text);
    expect(body.text).toBe("a".repeat(CAPTURED_BODY_BYTES - 1));
    expect(body.bytes).toBe(new TextEncoder().encode(text).byteLength);
  });

  it("says a body was cut when only its start was read, with the length it had", () => {
    expect(capturedBody(new TextEncoder().encode("abc"), 200_000)).toEqual({ text: "abc", bytes: 200_000, truncated: true });
  });
});

describe("a worker task's exchange", () => {
  it("is the pool and the input handed out, then what the worker reported", () => {
    const task = { stepId: "resize", attempt: 2, action: { type: "worker", pool: "images", input: { file: "a.png" } } };
    expect(handedOutExchange(task, "images")).toEqual({ stepId: "resize", attempt: 2, exchange: { request: { pool: "images", body: { text: '{"file":"a.png"}', bytes: 16 } } } });
    expect(workerAnswer({ output: { ok: 1 } })).toEqual({ response: { body: { text: '{"output":{"ok":1}}', bytes: 19 } } });
  });
});
