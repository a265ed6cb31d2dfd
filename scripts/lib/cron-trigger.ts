// The cron trigger for `npm start`. wrangler dev runs no cron triggers, so without this the sweep (the scheduled
// handler: it wakes a workflow whose alarm was lost and brings its index entry up to date) would never run
// locally, and a local list could stay wrong where a deployment repairs itself. It calls the scheduled handler
// through wrangler dev's --test-scheduled route (GET /__scheduled) at the start of every minute, as the
// `* * * * *` trigger in wrangler.toml does in production.
/* global fetch, setTimeout, clearTimeout, AbortSignal */

const MINUTE_MS = 60_000;
/** A sweep reads each index shard and wakes a bounded batch; one still running after this is left to finish alone. */
const REQUEST_TIMEOUT_MS = 50_000;
/** wrangler dev is still starting for a while: failures before the first run are not worth a line until then. */
const STARTUP_GRACE_MS = 2 * MINUTE_MS;

/**
 * Fires the Worker's scheduled handler at `url` (wrangler dev started with --test-scheduled) on every minute
 * until stop() is called. Says once when it starts failing and once when it works again, nothing otherwise
 * (wrangler logs each call as `GET /__scheduled`).
 */
export interface CronTriggerOptions {
  /** Where wrangler dev answers. */
  url: string;
  /** The cron expression the handler is told (default every minute, as wrangler.toml's trigger). */
  cron?: string;
  log?: (message: string) => void;
}

export function fireCronEveryMinute({ url, cron = "* * * * *", log = console.error }: CronTriggerOptions): { stop: () => void } {
  const startedAt = Date.now();
  let ran = false;
  let failing = false;
  let timer: ReturnType<typeof setTimeout> | undefined;

  const fire = async (): Promise<void> => {
    try {
      const response = await fetch(`${url}/__scheduled?cron=${encodeURIComponent(cron)}`, { signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
      await response.body?.cancel();
      if (!response.ok) throw new Error(`it answered ${response.status}`);
      if (failing) log("[start] the cron sweep runs again");
      ran = true;
      failing = false;
    } catch (error) {
      const starting = !ran && Date.now() - startedAt < STARTUP_GRACE_MS;
      const reason = error instanceof Error ? error.message : String(error);
      if (!failing && !starting) log(`[start] the cron sweep did not run (${reason}); trying again every minute`);
      failing = failing || !starting;
    }
  };
  const next = (): void => {
    timer = setTimeout(() => fire().finally(next), MINUTE_MS - (Date.now() % MINUTE_MS));
    // The timer never keeps the script alive once wrangler dev has exited.
    timer.unref();
  };
  next();
  return { stop: () => clearTimeout(timer) };
}

/** Where wrangler dev answers, from its --ip, --port and --local-protocol flags (its defaults: localhost, 8787). */
export function devServerUrl({ ip, port = "8787", protocol = "http" }: { ip?: string; port?: string; protocol?: string }): string {
  const wildcard = ip === undefined || ip === "*" || ip === "0.0.0.0" || ip === "::";
  const host = wildcard ? "localhost" : ip.includes(":") ? `[${ip}]` : ip;
  return `${protocol}://${host}:${port}`;
}
