// What the tools leave on disk: results as JSON, and generated sections of hand-written Markdown pages
// (docs/performance.md, docs/capacity.md) replaced between their markers, the rest of the page untouched.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";

export function writeJson(path: string, value: unknown): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, `${JSON.stringify(value, null, 2)}\n`);
}

/**
 * Puts `section` (which starts with `begin` and ends with `end`) in place of the page's section between
 * those markers; a page without them gets it appended, a missing page is created with `title`.
 */
export interface MarkedSection {
  begin: string;
  end: string;
  section: string;
  /** The first line of a page that does not exist yet. */
  title: string;
}

export function replaceMarkedSection(path: string, { begin, end, section, title }: MarkedSection): void {
  if (!existsSync(path)) {
    writeFileSync(path, `${title}\n\n${section}\n`);
    return;
  }
  const text = readFileSync(path, "utf8");
  const from = text.indexOf(begin);
  const to = text.indexOf(end);
  writeFileSync(path, from !== -1 && to > from ? `${text.slice(0, from)}${section}${text.slice(to + end.length)}` : `${text}\n${section}\n`);
}
