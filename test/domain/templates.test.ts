import { describe, expect, it } from "vitest";
import { checkTemplatePath, renderTemplates, TemplateError, templatePaths, templateProblems, type TemplateContext } from "../../src/domain/language/templates";

const context: TemplateContext = {
  input: { amount: 42, currency: "EUR", paid: false, note: null, tags: ["a", "b"], customer: { id: "c-1", vip: true } },
  workflow: { id: "wf-templates" },
  steps: {
    charge: { output: { id: "ch_1", cents: 4200 }, attempt: 2 },
    pending: { attempt: 0 },
  },
};

describe("renderTemplates", () => {
  const whole: { template: string; value: unknown }[] = [
    { template: "{{ input.amount }}", value: 42 },
    { template: "{{ input.paid }}", value: false },
    { template: "{{ input.note }}", value: null },
    { template: "{{ input.tags }}", value: ["a", "b"] },
    { template: "{{ input.tags.1 }}", value: "b" },
    { template: "{{ input.customer }}", value: { id: "c-1", vip: true } },
    { template: "{{ input.currency }}", value: "EUR" },
    { template: "{{ steps.charge.output.cents }}", value: 4200 },
    { template: "{{ steps.charge.attempt }}", value: 2 },
    { template: "{{workflow.id}}", value: "wf-templates" },
    { template: "{{   input.amount   }}", value: 42 },
    { template: `{{ "it's" }}`, value: "it's" },
  ];

  it.each(whole)("gives $template, a string that is exactly one template, the value's own JSON type", ({ template, value }) => {
    expect(renderTemplates(template, context)).toEqual(value);
  });

  const interpolated: { template: string; text: string }[] = [
    { template: "order {{ workflow.id }}", text: "order wf-templates" },
    { template: "{{ input.amount }} {{ input.currency }}", text: "42 EUR" },
    { template: "paid={{ input.paid }}", text: "paid=false" },
    { template: "customer {{ input.customer }}", text: 'customer {"id":"c-1","vip":true}' },
    { template: "https://pay.example/charges/{{ steps.charge.output.id }}/refund", text: "https://pay.example/charges/ch_1/refund" },
    { template: "no templates here", text: "no templates here" },
    { template: '{"a": {{ input.amount }}}', text: '{"a": 42}' },
    { template: "{ single braces } stay", text: "{ single braces } stay" },
    { template: "{{ '{{' }} input.amount {{ '}}' }}", text: "{{ input.amount }}" },
    { template: '{{ "{{" }}{{ input.currency }}{{ "}}" }}', text: "{{EUR}}" },
  ];

  it.each(interpolated)("interpolates $template as text", ({ template, text }) => {
    expect(renderTemplates(template, context)).toBe(text);
  });

  it("gives a string that is exactly one quoted template its text, as a string", () => {
    expect(renderTemplates("{{ '{{ input.amount }}' }}", context)).toBe("{{ input.amount }}");
  });

  it("sends a string a definition checked before mistyped templates were refused as it did then", () => {
    expect(renderTemplates("{{ input.amount } and {{ input.currency }}", context)).toBe("{{ input.amount } and EUR");
  });

  it("renders templates inside nested arrays and objects and leaves other values alone", () => {
    const value = {
      amount: "{{ input.amount }}",
      lines: [{ sku: "x", qty: 1, ref: "{{ steps.charge.output.id }}" }, ["{{ input.paid }}", 7, null]],
      meta: { flag: true, nothing: null, label: "for {{ input.customer.id }}" },
    };

    expect(renderTemplates(value, context)).toEqual({
      amount: 42,
      lines: [{ sku: "x", qty: 1, ref: "ch_1" }, [false, 7, null]],
      meta: { flag: true, nothing: null, label: "for c-1" },
    });
    expect(value.amount).toBe("{{ input.amount }}");
  });

  const missing = [
    "{{ input.missing }}",
    "{{ input.customer.address.city }}",
    "{{ steps.pending.output }}",
    "{{ steps.unknown.output.id }}",
    "total {{ input.missing }}",
    "{{ input.constructor }}",
  ];

  it.each(missing)("throws a TemplateError for %s, a path with no value", (template) => {
    expect(() => renderTemplates({ nested: [template] }, context)).toThrow(TemplateError);
  });

  it("names the path that has no value", () => {
    expect(() => renderTemplates("{{ input.missing }}", context)).toThrow('template "input.missing" has no value');
  });
});

describe("templatePaths", () => {
  it("lists every template path in a value, however deep", () => {
    const value = { url: "https://x/{{ workflow.id }}", body: { a: ["{{ input.a }} and {{steps.s.output.b}}"], n: 3 } };
    expect(templatePaths(value)).toEqual(["workflow.id", "input.a", "steps.s.output.b"]);
  });

  it("finds none in a value without templates", () => {
    expect(templatePaths({ a: "plain", b: [1, null, "{ not one }"] })).toEqual([]);
  });
});

describe("templateProblems", () => {
  const rows: { text: string; problem: string | undefined }[] = [
    { text: "{{ input.amount }}", problem: undefined },
    { text: "plain text", problem: undefined },
    { text: "{ \"json\": {\"in\": \"text\"} }", problem: undefined },
    { text: "{{ '{{' }} and {{ '}}' }}", problem: undefined },
    { text: "{{ input.amount }", problem: 'template "{{ input.amount }" is not closed by "}}" (for a literal "{{" write {{ \'{{\' }}, for "}}" write {{ \'}}\' }})' },
    { text: "{{ input.amount", problem: 'template "{{ input.amount" is not closed by "}}" (for a literal "{{" write {{ \'{{\' }}, for "}}" write {{ \'}}\' }})' },
    { text: "total: {{ input.amount } EUR {{ input.currency }}", problem: 'template "{{ input.amount }" is not closed by "}}" (for a literal "{{" write {{ \'{{\' }}, for "}}" write {{ \'}}\' }})' },
    { text: "{{{ input.amount }}}", problem: 'template "{{{" is not closed by "}}" (for a literal "{{" write {{ \'{{\' }}, for "}}" write {{ \'}}\' }})' },
    { text: "{ input.amount }}", problem: '"}}" closes no template in "{ input.amount }}" (for a literal "{{" write {{ \'{{\' }}, for "}}" write {{ \'}}\' }})' },
    { text: "{{ input.a }} }}", problem: '"}}" closes no template in "{{ input.a }} }}" (for a literal "{{" write {{ \'{{\' }}, for "}}" write {{ \'}}\' }})' },
    { text: `${"x".repeat(60)} }}`, problem: `"}}" closes no template in "…${"x".repeat(37)} }}" (for a literal "{{" write {{ '{{' }}, for "}}" write {{ '}}' }})` },
    { text: "{{ 'open }}", problem: `template "{{ 'open }}" opens a quote it does not close` },
    { text: "{{ 'a' b }}", problem: `template "{{ 'a' b" must end with "}}" after its quoted text` },
  ];

  it.each(rows)("judges $text", ({ text, problem }) => {
    expect(templateProblems({ body: [text] })).toEqual(problem === undefined ? [] : [problem]);
  });

  it("finds no paths in a string it refuses", () => {
    expect(templatePaths("{{ input.a }} and {{ input.b }")).toEqual([]);
  });
});

describe("checkTemplatePath", () => {
  const visible = new Set(["charge"]);
  const rows: { path: string; problem: string | undefined }[] = [
    { path: "input", problem: undefined },
    { path: "input.anything.deep", problem: undefined },
    { path: "workflow.id", problem: undefined },
    { path: "steps.charge.output", problem: undefined },
    { path: "steps.charge.output.id", problem: undefined },
    { path: "steps.charge.attempt", problem: undefined },
    { path: "workflow.name", problem: 'unknown template "workflow.name": only workflow.id exists' },
    { path: "steps.ship.output", problem: 'template "steps.ship.output" reads step "ship", which is not an upstream step' },
    { path: "steps.charge.error", problem: 'template "steps.charge.error" must read steps.<id>.output or steps.<id>.attempt' },
    { path: "steps.charge.attempt.n", problem: 'template "steps.charge.attempt.n" must read steps.<id>.output or steps.<id>.attempt' },
    { path: "secrets.key", problem: 'unknown template "secrets.key": paths start with input, workflow.id or steps.<id>' },
  ];

  it.each(rows)("judges $path", ({ path, problem }) => {
    expect(checkTemplatePath(path, visible)).toBe(problem);
  });
});
