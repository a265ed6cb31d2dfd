/**
 * Long polls for a workflow's result (`GET /v1/workflows/{id}/result?waitMs=`) waiting in this instance of its
 * object: the commit that ends the workflow wakes them all, and each one's own timer answers it at its `until`. No
 * polling, and nothing stored: a waiter lives only as long as its call. Should the object be reset meanwhile, the call
 * fails, and the front door's client asks a fresh instance again with the same `until` (a read, safe to repeat), which
 * finds the workflow ended or waits out the rest of the time.
 */

/** Abandoned waits are remembered this long: an abandon that arrives before its wait is still honoured. */
const ABANDONED_KEPT_MS = 60_000;

export class EndWaiters {
  private readonly waiting = new Map<string, () => void>();
  /** Waits whose caller went away, by id, with when: they end at once. */
  private readonly abandoned = new Map<string, number>();

  /** Resolves when the workflow ends (`wakeAll`), when the wait is abandoned, or at `until`, whichever comes first. */
  wait(waitId: string, until: number): Promise<void> {
    if (this.abandoned.delete(waitId)) return Promise.resolve();
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.waiting.delete(waitId);
        resolve();
      };
      const timer = setTimeout(done, Math.max(0, until - Date.now()));
      this.waiting.set(waitId, done);
    });
  }

  /** How many waits this instance holds. */
  get size(): number {
    return this.waiting.size;
  }

  /** A commit ended the workflow: every wait answers now. */
  wakeAll(): void {
    for (const done of [...this.waiting.values()]) done();
  }

  /** The caller of this wait went away (its request was cancelled): it ends now, answering no one. */
  abandon(waitId: string): void {
    const now = Date.now();
    for (const [id, at] of this.abandoned) if (at < now - ABANDONED_KEPT_MS) this.abandoned.delete(id);
    const done = this.waiting.get(waitId);
    if (done) done();
    else this.abandoned.set(waitId, now);
  }
}
