// Times on the workflow page, where attempts a few milliseconds apart must still read apart.

/** "12:03:07.214" today, "Nov 23 12:03:07.214" on another day; "—" for none. */
export function preciseClock(ms) {
  if (ms === undefined || ms === null) return "—";
  const date = new Date(ms);
  const time = `${date.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", second: "2-digit", hour12: false })}.${String(date.getMilliseconds()).padStart(3, "0")}`;
  return date.toDateString() === new Date().toDateString() ? time : `${date.toLocaleDateString([], { month: "short", day: "numeric" })} ${time}`;
}

/** An axis label relative to its start: "0", "+500 ms", "+1.5 s", "+2 min". */
export function offsetLabel(ms) {
  if (ms === 0) return "0";
  if (ms < 1_000) return `+${ms} ms`;
  if (ms < 60_000) return `+${Number((ms / 1_000).toFixed(2))} s`;
  if (ms < 3_600_000) return `+${Number((ms / 60_000).toFixed(1))} min`;
  return `+${Number((ms / 3_600_000).toFixed(1))} h`;
}
