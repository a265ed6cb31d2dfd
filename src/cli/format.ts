/** An epoch-millisecond time as people read it: UTC, to the second. */
export function time(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return "-";
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");
}

/** 850ms, 4.2s, 3m 05s, 2h 10m, 3d 4h. */
export function duration(ms: number): string {
  const abs = Math.abs(ms);
  if (abs < 1_000) return `${Math.round(ms)}ms`;
  if (abs < 60_000) return `${(ms / 1_000).toFixed(1)}s`;
  const [big, small, bigUnit, smallUnit, smallSize] =
    abs < 3_600_000 ? [60_000, 1_000, "m", "s", 60] : abs < 86_400_000 ? [3_600_000, 60_000, "h", "m", 60] : [86_400_000, 3_600_000, "d", "h", 24];
  const whole = Math.floor(abs / big);
  const rest = Math.floor(abs / small) % smallSize;
  return `${ms < 0 ? "-" : ""}${whole}${bigUnit} ${String(rest).padStart(2, "0")}${smallUnit}`;
}

/** "in 4.2s" or "3m 05s ago". */
export function relative(at: number, now: number): string {
  return at >= now ? `in ${duration(at - now)}` : `${duration(now - at)} ago`;
}

/** JSON on one line, cut to `max` characters. */
export function compactJson(value: unknown, max = 80): string {
  const text = JSON.stringify(value) ?? "undefined";
  return clip(text, max);
}

export function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, Math.max(0, max - 1))}…`;
}

/** Columns padded to their widest cell; the last column is left as is (it may be long). */
export function table(headers: string[], rows: string[][]): string[] {
  const all = [headers, ...rows];
  const widths = headers.map((_, column) => Math.max(...all.map((row) => (row[column] ?? "").length)));
  return all.map((row) =>
    row
      .map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column] ?? 0)))
      .join("  ")
      .trimEnd(),
  );
}

/** `key: value` lines with the keys aligned; entries whose value is undefined are left out. */
export function fields(entries: [string, string | undefined][]): string[] {
  const shown = entries.filter((entry): entry is [string, string] => entry[1] !== undefined);
  const width = Math.max(0, ...shown.map(([key]) => key.length));
  return shown.map(([key, value]) => `${`${key}:`.padEnd(width + 1)} ${value}`);
}
