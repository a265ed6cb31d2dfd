// The alarm sampler's record of its reads' round trips: bounded, and what it drops is only ever its fastest.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { keepRoundTrip } from "../lib/alarms.ts";
import type { RoundTrip } from "../lib/alarms.ts";

const tookMs = ([sentAt, answeredAt]: RoundTrip) => answeredAt - sentAt;

describe("the alarm sampler's round trips", () => {
  it("keeps every round trip until it holds twice what it keeps", () => {
    const trips: RoundTrip[] = [];
    for (let i = 0; i < 5; i += 1) keepRoundTrip(trips, [i * 100, i * 100 + 10 + i], 3);
    assert.deepEqual(trips, [[0, 10], [100, 111], [200, 212], [300, 313], [400, 414]]);
  });

  it("then keeps only the slowest, so the reads of the runtime's longest queue stay whatever the run's length", () => {
    const trips: RoundTrip[] = [];
    const took = [5, 2_400, 8, 12, 1_700, 3, 9, 6, 11, 4];
    took.forEach((ms, i) => keepRoundTrip(trips, [i * 1_000, i * 1_000 + ms], 2));
    assert.ok(trips.length < 4);
    assert.deepEqual(trips.slice(0, 2).map(tookMs), [2_400, 1_700]);
    assert.ok(trips.every((trip) => trip[0] % 1_000 === 0), "each kept round trip is one that was given, whole");
  });
});
