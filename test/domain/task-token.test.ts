import { describe, expect, it } from "vitest";
import { signTaskToken, verifyTaskToken, type TaskTokenClaims } from "../../src/domain/security/task-token";

const SECRET = "domain-test-secret";
const claims: TaskTokenClaims = { tenant: "acme", workflowId: "order-1", stepId: "charge", attempt: 3 };

/** Replaces one character with another from the base64url alphabet. */
function alter(text: string, index: number): string {
  const char = text[index] === "A" ? "B" : "A";
  return `${text.slice(0, index)}${char}${text.slice(index + 1)}`;
}

function toBase64Url(text: string): string {
  return btoa(text).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/** A token over any JSON payload, signed the way the deployment signs, to reach the claim checks. */
async function signRaw(payloadValue: unknown): Promise<string> {
  const payload = toBase64Url(JSON.stringify(payloadValue));
  const key = await crypto.subtle.importKey("raw", new TextEncoder().encode(SECRET), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const signature = new Uint8Array(await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(payload)));
  return `${payload}.${toBase64Url(String.fromCharCode(...signature))}`;
}

describe("task tokens", () => {
  it("verifies a token it signed and gives back its claims", async () => {
    const token = await signTaskToken(claims, SECRET);

    expect(token).toMatch(/^[\w-]+\.[\w-]+$/);
    expect(await verifyTaskToken(token, SECRET)).toEqual(claims);
  });

  it("keeps claims with characters outside ASCII", async () => {
    const unusual = { ...claims, tenant: "zürich-αβ" };
    expect(await verifyTaskToken(await signTaskToken(unusual, SECRET), SECRET)).toEqual(unusual);
  });

  it("signs each attempt differently", async () => {
    expect(await signTaskToken(claims, SECRET)).not.toBe(await signTaskToken({ ...claims, attempt: 4 }, SECRET));
  });

  it("refuses a token whose payload was altered", async () => {
    const [payload = "", signature = ""] = (await signTaskToken(claims, SECRET)).split(".");
    expect(await verifyTaskToken(`${alter(payload, 5)}.${signature}`, SECRET)).toBeUndefined();
  });

  it("refuses a token whose payload was swapped for another attempt's", async () => {
    const [, signature] = (await signTaskToken(claims, SECRET)).split(".");
    const [otherPayload] = (await signTaskToken({ ...claims, attempt: 4 }, SECRET)).split(".");
    expect(await verifyTaskToken(`${otherPayload}.${signature}`, SECRET)).toBeUndefined();
  });

  it("refuses a token whose signature was altered", async () => {
    const [payload = "", signature = ""] = (await signTaskToken(claims, SECRET)).split(".");
    expect(await verifyTaskToken(`${payload}.${alter(signature, 0)}`, SECRET)).toBeUndefined();
  });

  it("refuses a token signed with another secret", async () => {
    expect(await verifyTaskToken(await signTaskToken(claims, "other-secret"), SECRET)).toBeUndefined();
  });

  it.each(["", "garbage", "a.b", "a.b.c", ".", "!!!.???", "eyJ9.", "abc.d=="])("refuses %j", async (token) => {
    expect(await verifyTaskToken(token, SECRET)).toBeUndefined();
  });

  it("refuses a genuinely signed payload that does not hold the claims", async () => {
    expect(await verifyTaskToken(await signRaw(["acme", "order-1", "charge", 3]), SECRET)).toEqual(claims);
    expect(await verifyTaskToken(await signRaw(["acme", "order-1", "charge", "3"]), SECRET)).toBeUndefined();
    expect(await verifyTaskToken(await signRaw(["acme", "order-1", "charge", 3.5]), SECRET)).toBeUndefined();
    expect(await verifyTaskToken(await signRaw({ tenant: "acme" }), SECRET)).toBeUndefined();
  });
});
