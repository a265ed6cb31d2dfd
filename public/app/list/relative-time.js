// How far a moment is from now, in the words an operator reads at a glance ("in 4 min", "12 s ago").
import { duration } from "../format.js";

export function relative(ms, now = Date.now()) {
  if (ms === undefined || ms === null) return "";
  const delta = ms - now;
  if (Math.abs(delta) < 1_000) return "now";
  const amount = roughly(Math.abs(delta));
  return delta > 0 ? `in ${amount}` : `${amount} ago`;
}

/** How long something has waited: "850 ms", "5.4 s" under a minute, then one unit ("3 min", "2 h"). */
export function age(ms) {
  if (ms === undefined || ms === null) return "—";
  return ms < 60_000 ? duration(ms) : roughly(ms);
}

/** One unit is enough at a glance: "3 min", not "3 min 12 s". */
function roughly(ms) {
  if (ms < 60_000) return `${Math.round(ms / 1_000)} s`;
  if (ms < 3_600_000) return `${Math.round(ms / 60_000)} min`;
  if (ms < 86_400_000) return `${Math.round(ms / 3_600_000)} h`;
  return `${Math.round(ms / 86_400_000)} d`;
}

/** A workflow's age or its whole run: "took 4.2 s" once ended, "for 3 min 20 s" while open. */
export function runTime(createdAt, endedAt, now = Date.now()) {
  return endedAt === undefined ? `for ${duration(now - createdAt)}` : `took ${duration(endedAt - createdAt)}`;
}
