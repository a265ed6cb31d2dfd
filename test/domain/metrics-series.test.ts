import { describe, expect, it } from "vitest";
import { TERMINAL_WORKFLOW_STATUSES } from "../../src/domain/contract";
import { observeLateness } from "../../src/domain/machine/metrics";
import { addCounts, emptyCounts, OUTCOMES, seriesOf, type SeriesCounts } from "../../src/domain/metrics/series-points";
import { seriesRange, type SeriesQuery } from "../../src/domain/metrics/series-range";

const MINUTE = 60_000;
const NOW = Date.parse("2024-05-01T12:34:56.789Z");
const at = (iso: string) => Date.parse(iso);

describe("the range of a series", () => {
  const rows: { name: string; query: SeriesQuery; range: { from: number; to: number; stepMs: number; points: number } }[] = [
    { name: "nothing asked: the hour ending with now's minute, a point a minute", query: {}, range: { from: at("2024-05-01T11:35:00Z"), to: at("2024-05-01T12:35:00Z"), stepMs: MINUTE, points: 60 } },
    { name: "only to: the hour before it", query: { to: "2024-05-01T10:00:00Z" }, range: { from: at("2024-05-01T09:00:00Z"), to: at("2024-05-01T10:00:00Z"), stepMs: MINUTE, points: 60 } },
    { name: "from inside a minute: taken back to its start", query: { from: "2024-05-01T12:00:30Z", to: "2024-05-01T12:03:00Z" }, range: { from: at("2024-05-01T12:00:00Z"), to: at("2024-05-01T12:03:00Z"), stepMs: MINUTE, points: 3 } },
    { name: "to inside a step: the last step ends after it", query: { from: "2024-05-01T12:00:00Z", to: "2024-05-01T12:20:00Z", stepMs: 15 * MINUTE }, range: { from: at("2024-05-01T12:00:00Z"), to: at("2024-05-01T12:30:00Z"), stepMs: 15 * MINUTE, points: 2 } },
    { name: "epoch milliseconds", query: { from: String(at("2024-05-01T00:00:00Z")), to: String(at("2024-05-02T00:00:00Z")), stepMs: 86_400_000 }, range: { from: at("2024-05-01T00:00:00Z"), to: at("2024-05-02T00:00:00Z"), stepMs: 86_400_000, points: 1 } },
    { name: "a date alone is its midnight UTC; an offset is honoured", query: { from: "2024-05-01", to: "2024-05-01T02:00:00+01:00", stepMs: 30 * MINUTE }, range: { from: at("2024-05-01T00:00:00Z"), to: at("2024-05-01T01:00:00Z"), stepMs: 30 * MINUTE, points: 2 } },
    { name: "exactly 1 440 points", query: { from: "2024-05-01T00:00:00Z", to: "2024-05-02T00:00:00Z" }, range: { from: at("2024-05-01T00:00:00Z"), to: at("2024-05-02T00:00:00Z"), stepMs: MINUTE, points: 1_440 } },
  ];
  it.each(rows)("$name", ({ query, range }) => {
    expect(seriesRange(query, NOW)).toEqual({ ok: true, range });
  });

  const refusals: { name: string; query: SeriesQuery; field: string; says: RegExp }[] = [
    { name: "a 13th month", query: { from: "2024-13-01T00:00:00Z" }, field: "from", says: /is not a date/ },
    { name: "epoch ms past the last date", query: { to: "9000000000000000" }, field: "to", says: /is not a date/ },
    { name: "to at from's minute start", query: { from: "2024-05-01T12:00:30Z", to: "2024-05-01T12:00:00Z" }, field: "to", says: /must be after from \(2024-05-01T12:00:00\.000Z\)/ },
    { name: "a step of 90 s", query: { stepMs: 90_000 }, field: "stepMs", says: /whole number of minutes/ },
    { name: "a step of two days", query: { stepMs: 2 * 86_400_000 }, field: "stepMs", says: /to 86400000/ },
    { name: "1 441 points", query: { from: "2024-05-01T00:00:00Z", to: "2024-05-02T00:00:01Z" }, field: "stepMs", says: /^must give at most 1440 points, and 60000 gives 1441 from .*: use a stepMs of at least 120000/ },
    { name: "more points than even a day's step allows", query: { from: "1970-01-01", to: "2024-05-01" }, field: "stepMs", says: /ask for a shorter range/ },
  ];
  it.each(refusals)("refuses $name, naming $field", ({ query, field, says }) => {
    const result = seriesRange(query, NOW);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.issues).toHaveLength(1);
    expect(result.issues[0]).toMatchObject({ path: [field], code: "custom", message: expect.stringMatching(says) });
  });
});

function counts(fill: (counts: SeriesCounts) => void): SeriesCounts {
  const made = emptyCounts();
  fill(made);
  return made;
}

describe("the points of a series", () => {
  it("names every way a workflow ends", () => {
    expect([...OUTCOMES]).toEqual(TERMINAL_WORKFLOW_STATUSES);
  });

  it("answers every step, zeros and no lag where nothing happened, and the range's total", () => {
    const range = { from: 0, to: 4 * MINUTE, stepMs: MINUTE, points: 4 };
    const second = counts((c) => ((c.started = 2), (c.ended.completed = 1), (c.figures.attempts = 3), observeLateness(c.figures, 40)));
    const fourth = counts((c) => ((c.ended.failed = 1), (c.figures.retries = 2), (c.figures.timeouts.stalled = 1), observeLateness(c.figures, 2_000)));

    const { series, total, ...bounds } = seriesOf(range, new Map([[1, second], [3, fourth]]), new Map([[1, 250], [2, 0]]));

    expect(bounds).toEqual({ from: 0, to: 4 * MINUTE, stepMs: MINUTE });
    expect(series.map((point) => point.at)).toEqual([0, 1, 2, 3].map((i) => i * MINUTE));
    expect(series[0]).toEqual({
      at: 0,
      started: 0,
      completed: 0,
      failed: 0,
      compensated: 0,
      cancelled: 0,
      terminated: 0,
      attempts: 0,
      retries: 0,
      timeouts: { heartbeat: 0, start_to_close: 0, schedule_to_start: 0, stalled: 0 },
      compensations: 0,
      escalations: 0,
      detectionLatenessMs: { count: 0, p50: null, p99: null, max: null },
      queueLagMs: null,
    });
    expect(series[1]).toMatchObject({ started: 2, completed: 1, attempts: 3, detectionLatenessMs: { count: 1, p50: 40, p99: 40, max: 40 }, queueLagMs: 250 });
    expect(series[2]?.queueLagMs).toBe(0);
    expect(total).toMatchObject({ started: 2, completed: 1, failed: 1, attempts: 3, retries: 2, timeouts: { stalled: 1 }, queueLagMs: 250 });
    expect(total.detectionLatenessMs).toEqual({ count: 2, p50: 50, p99: 2_000, max: 2_000 });
  });

  it("adds counts bucket by bucket, keeping the larger max", () => {
    const a = counts((c) => ((c.ended.cancelled = 1), observeLateness(c.figures, 9), observeLateness(c.figures, 700)));
    const b = counts((c) => ((c.ended.cancelled = 2), (c.figures.escalations = 1), observeLateness(c.figures, 12)));

    const sum = addCounts(a, b);

    expect(sum.ended.cancelled).toBe(3);
    expect(sum.figures.escalations).toBe(1);
    expect(sum.figures.lateness).toEqual({ buckets: [1, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0], count: 3, sumMs: 721, maxMs: 700 });
  });
});
