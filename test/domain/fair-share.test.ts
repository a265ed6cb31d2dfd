import { describe, expect, it } from "vitest";
import { admission, type QueueGauge } from "../../src/domain/admission/back-pressure";
import { overFairShare, sumDeliveries, type DeliveryCount } from "../../src/domain/admission/fair-share";

const NOW = 1_700_000_000_000;
const BOUND = 10_000;
const d = (tenant: string, name: string, count: number): DeliveryCount => ({ tenant, name, count });

const rows: { name: string; deliveries: DeliveryCount[]; key: [string, string]; over: boolean }[] = [
  { name: "the only tenant and name filling the queue is over its share", deliveries: [d("a", "x", 10)], key: ["a", "x"], over: true },
  { name: "a tenant with nothing in the queue is not", deliveries: [d("a", "x", 10)], key: ["b", "x"], over: false },
  { name: "a tenant below 1/n of the deliveries is not", deliveries: [d("a", "x", 99), d("b", "x", 1)], key: ["b", "x"], over: false },
  { name: "the tenant above 1/n is", deliveries: [d("a", "x", 99), d("b", "x", 1)], key: ["a", "x"], over: true },
  { name: "two equal tenants are both at their share", deliveries: [d("a", "x", 50), d("b", "y", 50)], key: ["b", "y"], over: true },
  { name: "within the noisy tenant, a name below its share is not", deliveries: [d("a", "batch", 500), d("a", "nightly", 1)], key: ["a", "nightly"], over: false },
  { name: "within the noisy tenant, a name it never sent is not", deliveries: [d("a", "batch", 500)], key: ["a", "nightly"], over: false },
  { name: "within the noisy tenant, the noisy name is", deliveries: [d("a", "batch", 500), d("a", "nightly", 1)], key: ["a", "batch"], over: true },
  { name: "a quiet tenant's noisy name is not: tenants first", deliveries: [d("a", "batch", 500), d("b", "batch", 5)], key: ["b", "batch"], over: false },
];

describe("the fair share of the task queues' deliveries", () => {
  it.each(rows)("$name", ({ deliveries, key, over }) => expect(overFairShare(sumDeliveries(deliveries), { tenant: key[0], name: key[1] })).toBe(over));

  it("sums reports of the same tenant and name, dropping empty ones", () => {
    expect(sumDeliveries([d("a", "x", 2), d("b", "x", 0), d("a", "x", 3), d("a", "y", 1)])).toEqual([d("a", "x", 5), d("a", "y", 1)]);
  });
});

describe("admission of one start", () => {
  const behind = (deliveries: DeliveryCount[]): QueueGauge => ({ sample: { lagMs: BOUND + 4_000, at: NOW }, deliveries });
  const key = { tenant: "a", name: "x" };

  it("admits everyone while the queue is within the bound, whoever fills it", () => {
    expect(admission({ sample: { lagMs: BOUND, at: NOW }, deliveries: [d("a", "x", 10)] }, key, NOW, BOUND)).toEqual({ overloaded: false });
  });
  it("refuses the key at its share past the bound, with the queue's Retry-After", () => {
    expect(admission(behind([d("a", "x", 10)]), key, NOW, BOUND)).toEqual({ overloaded: true, lagMs: BOUND + 4_000, retryAfterSeconds: 4 });
  });
  it("admits a key below its share past the bound", () => {
    expect(admission(behind([d("b", "x", 10)]), key, NOW, BOUND)).toEqual({ overloaded: false });
  });
  it("refuses everyone past the bound when no deliveries were reported (consumers that do not count them)", () => {
    expect(admission(behind([]), key, NOW, BOUND)).toMatchObject({ overloaded: true });
  });
});
