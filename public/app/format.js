// Times and durations as an operator reads them.

/** "12:03:07" today, "Nov 23 12:03" on another day; "—" for none. */
export function clock(ms) {
  if (ms === undefined || ms === null) return "—";
  const date = new Date(ms);
  const sameDay = date.toDateString() === new Date().toDateString();
  return sameDay
    ? date.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", second: "2-digit", hour12: false })
    : date.toLocaleString([], { month: "short", day: "numeric", hour: "2-digit", minute: "2-digit", hour12: false });
}

/** "850 ms", "12.4 s", "3 min 20 s", "2 h 5 min". */
export function duration(ms) {
  if (ms === undefined || ms === null) return "—";
  if (ms < 1_000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1_000).toFixed(ms < 10_000 ? 1 : 0)} s`;
  if (ms < 3_600_000) return `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1_000)} s`;
  return `${Math.floor(ms / 3_600_000)} h ${Math.round((ms % 3_600_000) / 60_000)} min`;
}

/** ISO text or epoch ms, as epoch ms (the API gives ISO strings; history data sometimes numbers). */
export function toMs(value) {
  if (value === undefined || value === null) return undefined;
  return typeof value === "number" ? value : Date.parse(value);
}
