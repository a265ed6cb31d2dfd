import type { MetricsSeriesQuery, StartDeadLetterQuery, TargetListQuery } from "../../client/index";
import { METRICS_SERIES_MAX_POINTS } from "../../domain/contract";
import { stringFlag, usageLine, type Command, type FlagValues } from "../command";
import { UsageError } from "../failures";
import { definedOnly, durationMs } from "../flag-values";
import { PAGE_FLAGS, pageQuery } from "../page-flags";
import { deadLetterLines, metricsLines, poolListLines, seriesLines, targetListLines } from "../views/service";

const SERIES_FLAGS = ["from", "to", "step"] as const;

const metrics: Command = {
  name: "metrics",
  summary: "the tenant's figures now: workflows by status, attempts, retries, timeouts, detection lateness; --series over time",
  args: [],
  flags: {
    series: { type: "boolean", description: "per step of time instead (default: the last hour, a point a minute)" },
    from: { type: "string", value: "<time>", description: "with --series: where it starts (ISO 8601 or epoch ms; default an hour before --to)" },
    to: { type: "string", value: "<time>", description: "with --series: where it ends (default now)" },
    step: { type: "string", value: "<duration>", description: `with --series: each point's width, whole minutes (1m, 5m, 1h, 1d); at most ${METRICS_SERIES_MAX_POINTS} points` },
  },
  async run({ client, out, flags }) {
    if (flags.series !== true) {
      const stray = SERIES_FLAGS.find((name) => flags[name] !== undefined);
      if (stray !== undefined) throw new UsageError(`--${stray} goes with --series`, usageLine(metrics));
      const figures = await client.metrics();
      // The service answers JSON unless asked for Prometheus' text, which the client never asks for.
      out.result(figures, (json) => (typeof json === "string" ? [json] : metricsLines(json)));
      return;
    }
    out.result(await client.metricsSeries(seriesQuery(flags) as MetricsSeriesQuery), seriesLines);
  },
};

/** The times go as given (the service reads ISO 8601 or epoch ms and names a bad one); the step is read here. */
function seriesQuery(flags: FlagValues): Record<string, string> {
  const step = stringFlag(flags, "step");
  const stepMs = step === undefined ? undefined : String(durationMs("step", step, usageLine(metrics)));
  return definedOnly({ from: stringFlag(flags, "from"), to: stringFlag(flags, "to"), stepMs });
}

const targets: Command = {
  name: "targets",
  summary: "the circuit breakers of the hosts your steps call: open, half-open or closed, failures in a row, attempts parked",
  args: [],
  flags: PAGE_FLAGS,
  async run({ client, out, flags }) {
    out.result(await client.targets(pageQuery(flags) as TargetListQuery), (page) => targetListLines(page, Date.now()));
  },
};

export const pools: Command = {
  name: "pools",
  summary: "the worker pools: tasks pending and running, the oldest wait, the workers seen in the last 5 minutes",
  args: [],
  async run({ client, out }) {
    out.result(await client.pools(), (list) => poolListLines(list, Date.now()));
  },
};

const deadLetters: Command = {
  name: "dead-letters",
  summary: "the queued starts that could never start (a bad body, an unknown tenant, a refused start), newest first",
  args: [],
  flags: PAGE_FLAGS,
  notes: ["Each shows the error and the workflow it named; --json has the message body as it was queued."],
  async run({ client, out, flags }) {
    out.result(await client.startDeadLetters(pageQuery(flags) as StartDeadLetterQuery), deadLetterLines);
  },
};

export const SERVICE_COMMANDS: Command[] = [metrics, targets, deadLetters];
