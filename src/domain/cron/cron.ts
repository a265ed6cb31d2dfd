/** Cron arithmetic, by croner: five fields (or six, with seconds), IANA time zones, daylight saving as croner defines it. */
import { Cron } from "croner";

/** Why an expression or a time zone cannot be used, naming the field; undefined when both are fine. */
export function cronProblem(cron: string, timezone: string | undefined): { field: "cron" | "timezone"; message: string } | undefined {
  let pattern: Cron;
  try {
    pattern = new Cron(cron, { paused: true });
  } catch (error) {
    return { field: "cron", message: `cron "${cron}" does not parse: ${(error as Error).message}` };
  }
  if (timezone !== undefined) {
    try {
      new Cron(cron, { paused: true, timezone }).nextRun(new Date(0));
    } catch {
      return { field: "timezone", message: `time zone "${timezone}" is not an IANA time zone (e.g. "Europe/Berlin")` };
    }
  }
  return pattern.nextRun(new Date(0)) === null ? { field: "cron", message: `cron "${cron}" never fires` } : undefined;
}

/** The first fire strictly after `afterMs`, or undefined when there is none. */
export function nextFireAfter(cron: string, timezone: string, afterMs: number): number | undefined {
  return new Cron(cron, { paused: true, timezone }).nextRun(new Date(afterMs))?.getTime();
}

/**
 * The `count` newest fires at or before `atOrBeforeMs`, oldest first. croner counts in whole seconds and leaves out
 * a fire at its reference itself, hence the reference one second on.
 */
export function latestFiresUpTo(cron: string, timezone: string, atOrBeforeMs: number, count: number): number[] {
  const reference = new Date(Math.floor(atOrBeforeMs / 1_000) * 1_000 + 1_000);
  return new Cron(cron, { paused: true, timezone })
    .previousRuns(count, reference)
    .map((fire) => fire.getTime())
    .reverse();
}
