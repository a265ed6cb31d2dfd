// A pool's order (contract v1.2: "a pool hands out its oldest task of the best priority first"; fairness keys take
// turns within a priority), as a table of offers and the order workers get them.
import { describe, expect, it } from "vitest";
import { PoolQueue, type PendingTask } from "../../src/domain/pools/pool-queue";

const task = (key: string, priority = 3, fairnessKey = "", offeredAt = 0): PendingTask => ({ key, priority, fairnessKey, offeredAt });

function order(tasks: PendingTask[], withdrawn: string[] = []): string[] {
  const queue = new PoolQueue();
  for (const t of tasks) queue.add(t);
  for (const key of withdrawn) queue.remove(key);
  const taken: string[] = [];
  for (let next = queue.take(); next; next = queue.take()) taken.push(next.key);
  return taken;
}

describe("a pool's order", () => {
  it.each([
    { name: "oldest first", tasks: [task("a"), task("b"), task("c")], expected: ["a", "b", "c"] },
    { name: "best priority first", tasks: [task("low", 5), task("mid", 3), task("top", 1)], expected: ["top", "mid", "low"] },
    { name: "oldest first within a priority", tasks: [task("a", 2), task("x", 4), task("b", 2)], expected: ["a", "b", "x"] },
    { name: "keys take turns", tasks: [task("b1", 3, "big"), task("b2", 3, "big"), task("b3", 3, "big"), task("s1", 3, "small")], expected: ["b1", "s1", "b2", "b3"] },
    { name: "turns only within a priority", tasks: [task("b1", 3, "big"), task("b2", 3, "big"), task("s1", 4, "small")], expected: ["b1", "b2", "s1"] },
    { name: "a withdrawn task is skipped", tasks: [task("a"), task("b"), task("c")], withdrawn: ["b"], expected: ["a", "c"] },
    { name: "a key whose tasks were all withdrawn gives its turn away", tasks: [task("b1", 3, "big"), task("s1", 3, "small"), task("b2", 3, "big")], withdrawn: ["s1"], expected: ["b1", "b2"] },
  ])("$name", ({ tasks, withdrawn, expected }) => {
    expect(order(tasks, withdrawn)).toEqual(expected);
  });

  it("keeps a task offered twice once", () => {
    const queue = new PoolQueue();
    expect(queue.add(task("a"))).toBe(true);
    expect(queue.add(task("a"))).toBe(false);
    expect(queue.size).toBe(1);
  });

  it("says since when its longest-waiting task waits", () => {
    const queue = new PoolQueue();
    expect(queue.oldestOfferedAt()).toBeUndefined();
    queue.add(task("late", 1, "", 500));
    queue.add(task("early", 5, "k", 100));
    expect(queue.oldestOfferedAt()).toBe(100);
    queue.remove("early");
    expect(queue.oldestOfferedAt()).toBe(500);
  });

  it("does not starve one key's single task behind another key's 10 000", () => {
    const queue = new PoolQueue();
    for (let i = 0; i < 10_000; i++) queue.add(task(`big-${i}`, 3, "big"));
    queue.add(task("one", 3, "small"));
    expect([queue.take()?.key, queue.take()?.key]).toEqual(["big-0", "one"]);
  });
});
