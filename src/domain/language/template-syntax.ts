/**
 * How a string of a definition splits into literal text and `{{ path }}` templates. Every `{{` opens a template
 * that its `}}` closes, and a `}}` closes only a template: a brace short on either side (`"{{ input.amount }"`) is
 * a mistyped template, refused when the definition is checked, never sent to a remote as text. `{{ '…' }}` (or
 * `{{ "…" }}`) stands for its quoted text as it is: the way to write a literal `{{` or `}}`.
 */

/** Literal text, or the path of a template; a quoted template is literal text. */
export type TemplatePiece = { text: string } | { path: string };
export type ParsedTemplate = { ok: true; pieces: TemplatePiece[] } | { ok: false; problem: string };

/** How a literal brace pair is written, told with every problem a stray one gives. */
const ESCAPES = `for a literal "{{" write {{ '{{' }}, for "}}" write {{ '}}' }}`;
/** A problem quotes at most this much of the string. */
const SNIPPET_CHARS = 40;

type Read = { piece: TemplatePiece; end: number } | { problem: string };

export function parseTemplate(text: string): ParsedTemplate {
  const pieces: TemplatePiece[] = [];
  let literal = "";
  let at = 0;
  while (at < text.length) {
    const open = text.indexOf("{{", at);
    const close = text.indexOf("}}", at);
    if (close !== -1 && (open === -1 || close < open)) {
      return { ok: false, problem: `"}}" closes no template in "${leadingUpTo(text, close + 2)}" (${ESCAPES})` };
    }
    if (open === -1) {
      literal += text.slice(at);
      break;
    }
    literal += text.slice(at, open);
    const read = readTemplate(text, open);
    if ("problem" in read) return { ok: false, problem: read.problem };
    if ("text" in read.piece) {
      literal += read.piece.text;
    } else {
      if (literal !== "") pieces.push({ text: literal });
      literal = "";
      pieces.push(read.piece);
    }
    at = read.end;
  }
  if (literal !== "") pieces.push({ text: literal });
  return { ok: true, pieces };
}

/** The template that opens at `open`: a path up to its `}}` with no brace on the way, or a quoted text. */
function readTemplate(text: string, open: number): Read {
  const start = skipSpaces(text, open + 2);
  const quote = text[start];
  if (quote === "'" || quote === '"') return readQuoted(text, open, start, quote);
  let end = start;
  while (end < text.length && text[end] !== "{" && text[end] !== "}") end++;
  if (!text.startsWith("}}", end)) {
    return { problem: `template "${snippet(text, open, end + 1)}" is not closed by "}}" (${ESCAPES})` };
  }
  return { piece: { path: text.slice(start, end).trim() }, end: end + 2 };
}

function readQuoted(text: string, open: number, start: number, quote: string): Read {
  const closingQuote = text.indexOf(quote, start + 1);
  if (closingQuote === -1) return { problem: `template "${snippet(text, open, text.length)}" opens a quote it does not close` };
  const end = skipSpaces(text, closingQuote + 1);
  if (!text.startsWith("}}", end)) {
    return { problem: `template "${snippet(text, open, end + 1)}" must end with "}}" after its quoted text` };
  }
  return { piece: { text: text.slice(start + 1, closingQuote) }, end: end + 2 };
}

function skipSpaces(text: string, from: number): number {
  let at = from;
  while (at < text.length && /\s/.test(text[at] ?? "")) at++;
  return at;
}

/** The end of `text` up to `to`, its last SNIPPET_CHARS characters. */
function leadingUpTo(text: string, to: number): string {
  return to > SNIPPET_CHARS ? `…${text.slice(to - SNIPPET_CHARS, to)}` : text.slice(0, to);
}

/** `text` from `from` to `to`, shortened to its first SNIPPET_CHARS characters. */
function snippet(text: string, from: number, to: number): string {
  const part = text.slice(from, Math.min(to, text.length));
  return part.length > SNIPPET_CHARS ? `${part.slice(0, SNIPPET_CHARS)}…` : part;
}
