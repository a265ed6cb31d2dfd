/** A failed tick runs again this soon: by the guard set before it, or by the alarm a failed handler sets itself. */
const ALARM_FAILURE_RETRY_MS = 1_000;

/**
 * The object's one alarm, kept at the earliest moment the supervisor must act. Moving it earlier is done at
 * once; moving it later mostly waits until it fires: that alarm finds nothing due and sets the real deadline.
 * Heartbeats and each next step only ever push the deadline later, so most commits write no alarm at all.
 */
export class SupervisorAlarm {
  /** The alarm time this instance last set; only saves redundant writes, storage stays the truth. */
  private armedAt: number | null | undefined;
  /** Alarm writes and deletes by this instance, counted with the SQL work for the benchmarks. */
  writes = 0;

  constructor(private readonly storage: DurableObjectStorage) {}

  /** The alarm that woke us is spent (or storage may differ from what we noted): the next arm must write. */
  forget(): void {
    this.armedAt = undefined;
  }

  /**
   * Never later than `target`; none when nothing is pending. An alarm noted in the past is moved to a later target
   * all the same: it has fired (its tick may be the one running) or fires at once, and nothing is due before `target`.
   */
  async arm(target: number | undefined): Promise<void> {
    const wanted = target ?? null;
    if (this.armedAt === wanted) return;
    if (wanted !== null && this.armedAt !== undefined && this.armedAt !== null && this.armedAt <= wanted && this.armedAt > Date.now()) return;
    await this.write(wanted);
  }

  /**
   * Before a tick: an alarm a second on, synced to disk before the tick starts. A tick that then crashes (an
   * object reset drops its commit and the alarm that commit set) or throws runs again a second later, not after
   * the platform's 2 s + 4 s retries: an alarm set during a failed handler runs instead of its retry. The cost
   * is one more alarm write, and one wait for it to be durable, per tick.
   */
  async guard(): Promise<void> {
    await this.write(Date.now() + ALARM_FAILURE_RETRY_MS);
    await this.storage.sync();
    // The guard is no deadline, and `arm` skips a target later than the alarm it noted: the commit must write its own.
    this.forget();
  }

  /**
   * The alarm handler failed. The platform would retry it after 2 s, 4 s, 8 s … and stop after six tries; a
   * supervisor that waits that long is late, and one that stops strands the workflow. It sets itself again.
   */
  async rearmAfterFailure(error: unknown, info?: AlarmInvocationInfo): Promise<void> {
    console.error(JSON.stringify({ message: "alarm failed; re-arming", retryCount: info?.retryCount ?? 0, error: String(error) }));
    try {
      await this.storage.setAlarm(Date.now() + ALARM_FAILURE_RETRY_MS);
    } catch {
      // Storage itself is failing: only now lean on the platform's retries (and, after them, on the sweep).
      throw error;
    }
  }

  private async write(at: number | null): Promise<void> {
    // Noted before the await, so a transition that runs meanwhile compares against what is being set.
    this.armedAt = at;
    this.writes += 1;
    try {
      if (at === null) await this.storage.deleteAlarm();
      else await this.storage.setAlarm(at);
    } catch (error) {
      this.armedAt = undefined;
      throw error;
    }
  }
}

/** The one time the alarm is set for: the earliest of the state's next deadline and the outbox's next delivery. */
export function alarmTarget(deadline: number | undefined, delivery: number | undefined): number | undefined {
  if (delivery === undefined) return deadline;
  return deadline === undefined ? delivery : Math.min(deadline, delivery);
}
