import { describe, expect, it } from "vitest";
import { decodeCursor, encodeCursor } from "../../src/workflow-index/cursor";

describe("list cursors", () => {
  it("round-trip a position and are URL-safe", () => {
    const position = { createdAt: 1_790_000_000_123, id: "order:42/ü" };
    const cursor = encodeCursor(position);
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(decodeCursor(cursor)).toEqual(position);
  });

  it.each(["", "not base64!", "e30", encodeCursor({ createdAt: 1, id: "x" }).slice(0, -3), btoaUrl('[1,""]'), btoaUrl('["1","x"]'), btoaUrl("[-1,\"x\"]")])(
    "refuses %j",
    (cursor) => {
      expect(decodeCursor(cursor)).toBeUndefined();
    },
  );
});

function btoaUrl(text: string): string {
  return btoa(text).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}
