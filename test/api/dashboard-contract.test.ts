// The dashboard has no build step: it reads the API's statuses, id pattern and operator commands from a module
// that scripts/generate-contract.ts writes from src/domain/contract.ts (before tests, start and deploy).
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import * as contract from "../../src/domain/contract";

// Not a literal: the module is generated, so the type checker has no declaration of it to read.
const GENERATED = "../../public/app/generated/contract.js";

describe("public/app/generated/contract.js", () => {
  it("holds every value of src/domain/contract.ts, the operator commands' table included", async () => {
    const generated: Record<string, unknown> = await import(GENERATED);
    expect({ ...generated }).toEqual({ ...contract });
  });

  it("is served with the dashboard's other modules", async () => {
    const response = await env.ASSETS.fetch("http://shepherd.test/app/generated/contract.js");
    expect(response.status).toBe(200);
    expect(await response.text()).toContain("export const OPERATOR_COMMANDS = {");
  });
});
