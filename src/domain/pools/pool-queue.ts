/**
 * A pool's pending tasks in the order workers get them: the best priority first (1 before 5); within a priority,
 * fairness keys take turns (one customer's 10 000 tasks do not starve another's one); within a key, the oldest
 * first. Pure and in memory: the pool object keeps the rows and rebuilds this from them when it starts. Taking the
 * next task is O(1) amortised, whatever the number of tasks or keys.
 */

export interface PendingTask {
  /** `<workflowId>/<stepId>#<attempt>`: one attempt is one task. */
  key: string;
  priority: number;
  fairnessKey: string;
  /** When it was offered to this pool. */
  offeredAt: number;
}

/** The tasks of one fairness key, oldest first (a queue with a moving head, so taking is O(1)). */
class Lane {
  private readonly tasks: PendingTask[] = [];
  private head = 0;

  push(task: PendingTask): void {
    this.tasks.push(task);
  }

  /** The oldest task still live, taken; undefined when none is left. */
  shift(live: (task: PendingTask) => boolean): PendingTask | undefined {
    while (this.head < this.tasks.length) {
      const task = this.tasks[this.head++]!;
      if (live(task)) return this.compacted(task);
    }
    return undefined;
  }

  /** The oldest task still live, left in place. */
  peek(live: (task: PendingTask) => boolean): PendingTask | undefined {
    while (this.head < this.tasks.length && !live(this.tasks[this.head]!)) this.head++;
    return this.tasks[this.head];
  }

  private compacted(task: PendingTask): PendingTask {
    // Drop what was taken once it is most of the array, so a long-lived lane does not grow for ever.
    if (this.head > 1024 && this.head * 2 > this.tasks.length) {
      this.tasks.splice(0, this.head);
      this.head = 0;
    }
    return task;
  }
}

/** One priority's lanes, and the order in which their keys take turns. */
class Level {
  readonly lanes = new Map<string, Lane>();
  /** Keys with tasks, in turn order: the next task comes from the first; a key that gave one goes to the back. */
  private turns: string[] = [];
  private turn = 0;

  add(task: PendingTask): void {
    let lane = this.lanes.get(task.fairnessKey);
    if (!lane) {
      lane = new Lane();
      this.lanes.set(task.fairnessKey, lane);
      this.turns.push(task.fairnessKey);
    }
    lane.push(task);
  }

  take(live: (task: PendingTask) => boolean): PendingTask | undefined {
    while (this.turn < this.turns.length) {
      const key = this.turns[this.turn++]!;
      const task = this.lanes.get(key)!.shift(live);
      if (!task) {
        this.lanes.delete(key);
        continue;
      }
      this.turns.push(key);
      this.compactTurns();
      return task;
    }
    return undefined;
  }

  private compactTurns(): void {
    if (this.turn > 1024 && this.turn * 2 > this.turns.length) {
      this.turns = this.turns.slice(this.turn);
      this.turn = 0;
    }
  }
}

export class PoolQueue {
  private readonly levels = new Map<number, Level>();
  /** Live tasks by key; a task taken or withdrawn leaves here at once and is skipped where it still sits in a lane. */
  private readonly live = new Map<string, PendingTask>();
  private readonly isLive = (task: PendingTask): boolean => this.live.get(task.key) === task;

  get size(): number {
    return this.live.size;
  }

  /** Adds a task; one already here under its key is left as it is (an offer delivered twice). */
  add(task: PendingTask): boolean {
    if (this.live.has(task.key)) return false;
    this.live.set(task.key, task);
    let level = this.levels.get(task.priority);
    if (!level) {
      level = new Level();
      this.levels.set(task.priority, level);
    }
    level.add(task);
    return true;
  }

  remove(key: string): boolean {
    return this.live.delete(key);
  }

  /** The next task a worker gets, taken out of the queue; undefined when none waits. */
  take(): PendingTask | undefined {
    for (const priority of [...this.levels.keys()].sort((a, b) => a - b)) {
      const task = this.levels.get(priority)!.take(this.isLive);
      if (task) {
        this.live.delete(task.key);
        return task;
      }
      this.levels.delete(priority);
    }
    return undefined;
  }

  /** When the longest-waiting task was offered; undefined when none waits. */
  oldestOfferedAt(): number | undefined {
    let oldest: number | undefined;
    for (const level of this.levels.values()) {
      for (const lane of level.lanes.values()) {
        const head = lane.peek(this.isLive);
        if (head && (oldest === undefined || head.offeredAt < oldest)) oldest = head.offeredAt;
      }
    }
    return oldest;
  }
}
