import { describe, expect, it } from "vitest";
import { canonicalJson } from "../../src/domain/security/canonical-json";

describe("canonicalJson", () => {
  it("writes the same text for objects whose keys come in a different order", () => {
    const one = { name: "order", steps: [{ id: "a", action: { url: "u", type: "http" } }], input: { b: 2, a: 1 } };
    const other = { input: { a: 1, b: 2 }, steps: [{ action: { type: "http", url: "u" }, id: "a" }], name: "order" };

    expect(canonicalJson(one)).toBe(canonicalJson(other));
    expect(canonicalJson(other)).toBe('{"input":{"a":1,"b":2},"name":"order","steps":[{"action":{"type":"http","url":"u"},"id":"a"}]}');
  });

  it("keeps the order of array items, which carries meaning", () => {
    expect(canonicalJson([2, 1])).not.toBe(canonicalJson([1, 2]));
  });

  it("tells different values apart", () => {
    expect(canonicalJson({ a: 1 })).not.toBe(canonicalJson({ a: "1" }));
    expect(canonicalJson({ a: null })).toBe('{"a":null}');
  });

  it("writes primitives as JSON does", () => {
    expect([canonicalJson("x"), canonicalJson(3), canonicalJson(null), canonicalJson(true)]).toEqual(['"x"', "3", "null", "true"]);
  });
});
