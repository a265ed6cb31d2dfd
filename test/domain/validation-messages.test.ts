import { z } from "zod";
import { describe, expect, it } from "vitest";
import { OnFailureSchema } from "../../src/domain/language/schemas";
import { sentenceOf } from "../../src/domain/validation-messages";

/** The first problem zod finds in `value`, as the API's message says it. */
function sentence(schema: z.ZodType, value: unknown): string {
  const parsed = schema.safeParse(value);
  if (parsed.success) throw new Error(`${JSON.stringify(value)} was accepted`);
  const [issue] = parsed.error.issues;
  return sentenceOf(issue?.path ?? [], issue?.message ?? "");
}

const Body = z.strictObject({
  onFailure: OnFailureSchema.optional(),
  name: z.string().min(1).max(8).optional(),
  url: z.string().optional(),
  count: z.int().min(1).max(100).optional(),
  ratio: z.number().gt(0).lt(1).optional(),
  limit: z.coerce.number().int().optional(),
  tags: z.array(z.string()).min(1).max(2).optional(),
  code: z.string().length(3).optional(),
  id: z.string().regex(/^[a-z]+$/).optional(),
  kind: z.literal("http").optional(),
  flag: z.boolean().optional(),
  action: z.discriminatedUnion("type", [z.strictObject({ type: z.literal("http"), url: z.string() }), z.strictObject({ type: z.literal("worker"), pool: z.string() })]).optional(),
  nested: z.strictObject({ required: z.string() }).optional(),
});

describe("a validation problem, as a sentence", () => {
  const rows: { what: string; value: unknown; sentence: string }[] = [
    { what: "a misspelt enum value lists the allowed ones", value: { onFailure: "compensat" }, sentence: 'onFailure must be one of "compensate", "escalate" or "fail"' },
    { what: "a value of neither form of a union names both", value: { onFailure: 3 }, sentence: 'onFailure must be one of "compensate", "escalate" or "fail", or an object' },
    { what: "a union's object form tells its own problem", value: { onFailure: { escalate: { afterMs: 1000, then: "ignore" } } }, sentence: 'onFailure: escalate.then must be one of "compensate", "fail", "skip" or "retry"' },
    { what: "a missing field is required", value: { nested: {} }, sentence: "nested.required is required" },
    { what: "a NaN is no number", value: { limit: "abc" }, sentence: "limit must be a number" },
    { what: "a fraction where a whole number goes", value: { count: 2.5 }, sentence: "count must be a whole number, not 2.5" },
    { what: "a wrong type names what was sent", value: { name: 42 }, sentence: "name must be a string, not 42" },
    { what: "an array where an object goes", value: { nested: [] }, sentence: "nested must be an object, not an array" },
    { what: "a string where true or false goes", value: { flag: "yes" }, sentence: "flag must be true or false, not a string" },
    { what: "an empty string", value: { name: "" }, sentence: "name must not be empty" },
    { what: "a string too long", value: { name: "123456789" }, sentence: "name must be at most 8 characters long" },
    { what: "a string of the wrong length", value: { code: "ab" }, sentence: "code must be exactly 3 characters long" },
    { what: "a number under its minimum", value: { count: 0 }, sentence: "count must be at least 1" },
    { what: "a number over its maximum", value: { count: 101 }, sentence: "count must be at most 100" },
    { what: "a number at an exclusive bound", value: { ratio: 1 }, sentence: "ratio must be less than 1" },
    { what: "an empty list", value: { tags: [] }, sentence: "tags must not be empty" },
    { what: "a list too long", value: { tags: ["a", "b", "c"] }, sentence: "tags must have at most 2 items" },
    { what: "a string off its pattern", value: { id: "A-1" }, sentence: "id must match ^[a-z]+$" },
    { what: "a literal", value: { kind: "grpc" }, sentence: 'kind must be "http"' },
    { what: "an unknown discriminator lists the known ones", value: { action: { type: "grpc" } }, sentence: 'action.type must be one of "http" or "worker"' },
    { what: "an unknown field", value: { colour: "blue" }, sentence: 'the request has an unknown field "colour"' },
    { what: "unknown fields", value: { colour: "blue", size: 3 }, sentence: 'the request has unknown fields "colour" and "size"' },
    { what: "a body that is no object", value: null, sentence: "the request must be an object, not null" },
  ];

  it.each(rows)("$what", ({ value, sentence: expected }) => {
    expect(sentence(Body, value)).toBe(expected);
  });

  it("leaves a message a schema gives itself as it is, after its path", () => {
    const Refined = z.strictObject({ at: z.string().refine((text) => text.startsWith("T"), "give a time such as T10:00") });
    expect(sentence(Refined, { at: "ten" })).toBe("at: give a time such as T10:00");
  });
});
