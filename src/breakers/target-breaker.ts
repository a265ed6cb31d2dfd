import { DurableObject } from "cloudflare:workers";
import { tellEveryAgentHost } from "../agents/agent-host";
import { backoffMs } from "../domain/machine/backoff";
import { schedulerFor } from "../workflow/client";
import { admit, newBreaker, nextAlarmAt, onAlarm, probeNotTaken, recordFailure, recordSuccess, type BreakerState, type Caller } from "../domain/breaker/machine";
import type { AdmitReply, BreakerCall, BreakerReply, FailureReply } from "./breaker-rpc";
import { BreakerStore, type ListingState } from "./breaker-store";
import { upsertTarget } from "./targets-index";

/** A change of counts only (failures, parked steps) reaches the listing at most this often; a change of state at once. */
const LISTING_EVERY_MS = 1_000;
const LISTING_RETRY = { initialMs: 1_000, maxMs: 60_000, jitter: 0.2 };

type Change = (breaker: BreakerState, now: number) => { breaker: BreakerState; parkedChanged?: boolean };
type Released = { callers: Caller[]; probe: boolean };

/**
 * The circuit breaker of one target host for one tenant (named `<tenant>\n<host>`), shared by all its workflows.
 * Agents report only failures, and successes while they know of trouble, so a healthy host never reaches it.
 * Each method loads, applies a pure function (src/domain/breaker/machine.ts), stores in one synchronous burst, re-arms the
 * alarm, then acts: tells the agent hosts when it opens or closes, releases parked steps, updates the listing.
 */
export class TargetBreaker extends DurableObject<Env> {
  private readonly store: BreakerStore;
  /** One listing write at a time: its end looks again at what changed meanwhile. */
  private listingWrite: Promise<void> | undefined;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.store = new BreakerStore(ctx.storage.sql);
  }

  async recordFailure(call: BreakerCall): Promise<FailureReply> {
    let openedNow = false;
    const breaker = await this.change(call, (current, now) => {
      const result = recordFailure(current, call.settings, now);
      openedNow = result.openedNow;
      return result;
    });
    return { ...replyOf(breaker), openedNow };
  }

  async recordSuccess(call: BreakerCall): Promise<BreakerReply> {
    const breaker = await this.change(call, (current, now) => ({ breaker: recordSuccess(current, call.settings, now, this.store.parkedCount()) }));
    return replyOf(breaker);
  }

  /** Not admitted: the step is parked here (its workflow is told so by the agent) until the breaker releases it. */
  async admit(call: BreakerCall): Promise<AdmitReply> {
    let admitted = false;
    const breaker = await this.change(call, (current, now) => {
      const result = admit(current, call.settings, call, now);
      admitted = result.admitted;
      return { breaker: result.breaker, parkedChanged: !admitted && this.store.park(call, now) };
    });
    return { ...replyOf(breaker), admitted };
  }

  /** Half-open and the probe at the end of an open period, paced releases after a close, the listing's retries. */
  override async alarm(): Promise<void> {
    const released: Released = { callers: [], probe: false };
    const committed = await this.commit((current, now) => {
      const result = onAlarm(current, now, { count: this.store.parkedCount(), oldest: this.store.oldest(1)[0] });
      released.probe = result.release === "probe";
      released.callers = this.store.oldest(result.release === "probe" ? 1 : result.release);
      this.store.unpark(released.callers);
      return { breaker: result.breaker, parkedChanged: released.callers.length > 0 };
    });
    if (committed) await this.act(committed.before, committed.after, released);
  }

  /** An agent's call: the breaker is created by the first one, and its effects run after the reply. */
  private async change(call: BreakerCall, apply: Change): Promise<BreakerState> {
    const committed = await this.commit(apply, call);
    if (!committed) throw new Error("a breaker called with its tenant and host always exists");
    this.ctx.waitUntil(this.act(committed.before, committed.after, { callers: [], probe: false }));
    return committed.after;
  }

  private async commit(apply: Change, seed?: BreakerCall): Promise<{ before: BreakerState; after: BreakerState } | undefined> {
    const now = Date.now();
    const loaded = this.store.load() ?? (seed && { breaker: newBreaker(seed.tenant, seed.host, seed.settings, now), listing: { writtenVersion: 0, failures: 0 } });
    if (!loaded) return undefined;
    const before = loaded.breaker;
    let after = before;
    this.ctx.storage.transactionSync(() => {
      const result = apply(before, now);
      if (!result.parkedChanged && JSON.stringify(result.breaker) === JSON.stringify(before)) return;
      after = { ...result.breaker, version: before.version + 1, updatedAt: now };
      this.store.save(after, listingAfterChange(loaded.listing, after, now));
    });
    await this.armAlarm();
    return { before, after };
  }

  private async act(before: BreakerState, after: BreakerState, released: Released): Promise<void> {
    const work: Promise<void>[] = [this.writeListing()];
    // Agents that never saw a failure of this host learn it is down (or back) before their next attempt to it.
    if ((before.state === "closed") !== (after.state === "closed")) work.push(tellEveryAgentHost(this.env, { tenant: after.tenant, host: after.host, ...replyOf(after) }));
    for (const caller of released.callers) work.push(this.release(after, caller, released.probe));
    await Promise.allSettled(work);
  }

  /** A release that is lost costs the step its backstop wait, nothing more; a probe that is not taken is replaced. */
  private async release(breaker: BreakerState, caller: Caller, probe: boolean): Promise<void> {
    let taken = false;
    try {
      const reply = await schedulerFor(this.env, breaker.tenant, caller.workflowId).releaseParked(caller.stepId, breaker.host);
      taken = "released" in reply && reply.released;
    } catch (error) {
      console.error(JSON.stringify({ message: "could not release a parked step", host: breaker.host, ...caller, error: String(error) }));
    }
    if (probe && !taken) await this.commit((current) => ({ breaker: probeNotTaken(current, caller) }));
  }

  /** D1 is the listing, not the truth: a failed write is tried again by the alarm, and an older one never wins. */
  private writeListing(): Promise<void> {
    this.listingWrite ??= this.writeDueListing().finally(() => (this.listingWrite = undefined));
    return this.listingWrite;
  }

  private async writeDueListing(): Promise<void> {
    const loaded = this.store.load();
    if (!loaded || !listingDue(loaded.breaker, loaded.listing, Date.now())) return;
    const { breaker } = loaded;
    const row = { tenant: breaker.tenant, host: breaker.host, state: breaker.state, failures: breaker.failures, parked: this.store.parkedCount(), version: breaker.version, updatedAt: breaker.updatedAt };
    let written = true;
    try {
      await upsertTarget(this.env.DB, { ...row, ...(breaker.state === "closed" || breaker.openUntil === undefined ? {} : { openUntil: breaker.openUntil }) });
    } catch (error) {
      written = false;
      console.error(JSON.stringify({ message: "could not write the target's listing", host: breaker.host, error: String(error) }));
    }
    const now = Date.now();
    const current = this.store.load();
    if (current) this.store.save(current.breaker, listingAfterWrite(current.listing, current.breaker, written ? breaker : undefined, now));
    await this.armAlarm();
  }

  /**
   * The one place the alarm is set: the earliest of the breaker's next moment and the listing's next write. Read
   * and issued with no await in between, so of two calls the later one, which saw the later state, wins.
   */
  private armAlarm(): Promise<void> {
    const loaded = this.store.load();
    if (!loaded) return Promise.resolve();
    const { breaker, listing } = loaded;
    const candidates = [nextAlarmAt(breaker, this.store.parkedCount()), breaker.version > listing.writtenVersion ? listing.dueAt : undefined];
    const due = candidates.filter((at): at is number => at !== undefined);
    return due.length === 0 ? this.ctx.storage.deleteAlarm() : this.ctx.storage.setAlarm(Math.min(...due));
  }
}

function replyOf(breaker: BreakerState): BreakerReply {
  return { state: breaker.state, failures: breaker.failures, ...(breaker.state === "closed" || breaker.openUntil === undefined ? {} : { openUntil: breaker.openUntil }) };
}

function listingDue(breaker: BreakerState, listing: ListingState, now: number): boolean {
  return breaker.version > listing.writtenVersion && listing.dueAt !== undefined && listing.dueAt <= now;
}

/** A new state goes to the listing at once, new counts at most once a LISTING_EVERY_MS; a failed write keeps its backoff. */
function listingAfterChange(listing: ListingState, after: BreakerState, now: number): ListingState {
  if (listing.failures > 0 && listing.dueAt !== undefined) return listing;
  const at = after.state !== listing.writtenState ? now : Math.max(now, (listing.writtenAt ?? 0) + LISTING_EVERY_MS);
  return { ...listing, dueAt: Math.min(listing.dueAt ?? at, at) };
}

function listingAfterWrite(listing: ListingState, breaker: BreakerState, written: BreakerState | undefined, now: number): ListingState {
  if (!written) {
    const failures = listing.failures + 1;
    return { ...listing, failures, dueAt: now + backoffMs(failures - 1, LISTING_RETRY) };
  }
  const next: ListingState = { writtenVersion: Math.max(listing.writtenVersion, written.version), writtenState: written.state, writtenAt: now, failures: 0 };
  // Changed again while the write was under way: that change goes out with the next write.
  if (breaker.version <= next.writtenVersion) return next;
  return { ...next, dueAt: breaker.state !== written.state ? now : now + LISTING_EVERY_MS };
}
