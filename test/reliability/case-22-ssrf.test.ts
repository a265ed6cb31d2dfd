import { createExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createApp } from "../../src/api/app";
import { checkTarget } from "../../src/domain/targets";
import { bearer } from "../helpers/api";

const strict = { allowPrivate: false };

/** Hosts an agent must never be pointed at, in the spellings an attacker would try. */
const privateHost = fc.oneof(
  fc.tuple(fc.nat(255), fc.nat(255), fc.nat(255), fc.nat(255)).map((parts) => parts.join(".")),
  fc.constantFrom("127.0.0.1", "169.254.169.254", "10.0.0.1", "0.0.0.0", "2130706433", "0x7f.0.0.1", "017700000001", "127.1"),
  fc.constantFrom("[::1]", "[::ffff:127.0.0.1]", "[fe80::1]", "[fd00::1]", "[0:0:0:0:0:0:0:1]"),
  fc.constantFrom("localhost", "LOCALHOST", "localhost.", "api.localhost", "metadata.google.internal", "db.internal", "printer.local", "router.lan", "intranet"),
);
const path = fc.constantFrom("/", "/latest/meta-data", "/admin?x=1", "");
const scheme = fc.constantFrom("https", "http");
const userinfo = fc.constantFrom("", "user@", "user:pass@");

let cases = 0;

describe("case 22: SSRF", () => {
  it("refuses every private, loopback, link-local, IP-literal or credentialed target variant (fast-check)", () => {
    fc.assert(
      fc.property(scheme, userinfo, privateHost, fc.option(fc.integer({ min: 1, max: 65535 }), { nil: undefined }), path, (s, u, host, port, p) => {
        cases += 1;
        const url = `${s}://${u}${host}${port === undefined ? "" : `:${port}`}${p}`;
        expect(checkTarget(url, strict), url).toEqual(expect.any(String));
      }),
      { numRuns: 400 },
    );
    console.log(`case 22: ${cases} URL variants refused`);
  });

  it("refuses them at create with 400 validation_failed in a deployment without private targets", async () => {
    const app = createApp();
    const deployed = { ...env, ALLOW_PRIVATE_TARGETS: "false" };
    for (const url of ["https://127.0.0.1/x", "https://169.254.169.254/latest/meta-data", "https://[::1]/", "https://localhost/", "https://db.internal/", "https://user:pw@api.example.com/", "http://api.example.com/"]) {
      const response = await app.fetch(
        new Request("http://shepherd.test/v1/workflows", {
          method: "POST",
          headers: { ...bearer(), "Content-Type": "application/json" },
          body: JSON.stringify({ definition: { name: "ssrf", steps: [{ id: "a", action: { type: "http", url } }] } }),
        }),
        deployed,
        createExecutionContext(),
      );
      expect(response.status, url).toBe(400);
      const body = (await response.json()) as { error: { code: string; details: { path: unknown[] }[] } };
      expect(body.error.code).toBe("validation_failed");
      expect(body.error.details.map((detail) => detail.path)).toContainEqual(["definition", "steps", 0, "action", "url"]);
    }
  });
});
