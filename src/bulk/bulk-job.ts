import { DurableObject } from "cloudflare:workers";
import { withBulkFaults } from "../dev/fault-bindings";
import { sameBulkRequest, toBulkJobView, type BulkJobSpec, type BulkJobView } from "../domain/bulk/job";
import type { BulkOutcome } from "../domain/bulk/actions";
import { BULK_ACTIONS_PER_ALARM, BULK_CLOCK_SLACK_MS, BULK_CONCURRENCY, BULK_GAP_MS, BULK_LEASE_MS, BULK_MAX_TRIES, BULK_PAGES_PER_ALARM } from "../domain/bulk/pace";
import { bulkCaller, type BulkCaller } from "./bulk-caller";
import { registerBulkJob } from "./bulk-index";
import { BulkRows, type UncertainTarget } from "./bulk-rows";
import type { BulkCreation } from "./bulk-stub";
import { inTurns } from "./in-turns";
import { nextMatchingPage } from "./matching-page";

const DONE: BulkOutcome = { done: true };

/**
 * One bulk request (`POST /v1/bulk`): it pages the cross-workflow index for the workflows its filter matches and acts
 * on each through the workflow's own object, a slice per alarm with a gap between (domain/bulk/pace.ts). Its rows
 * (bulk-rows.ts) hold one entry per matching workflow, written before the action is made, so a restart at any point
 * neither loses a workflow nor acts on one twice: an action that may have landed is looked up before it is made again.
 */
export class BulkJob extends DurableObject<Env> {
  private readonly rows: BulkRows;
  /**
   * The slice this instance is running. The platform never runs two alarms of one object at once, but a test's
   * `runDurableObjectAlarm` calls the handler directly: it joins the running slice rather than race it (a second
   * slice would take the first one's calls in flight for calls of a dead instance).
   */
  private slice: Promise<void> | undefined;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.rows = new BulkRows(ctx.storage);
  }

  /** Stores the job and starts it; a job created twice (a retried call) is the first one, unless it asked otherwise. */
  async create(spec: BulkJobSpec): Promise<BulkCreation> {
    const stored = this.rows.spec();
    if (!stored) {
      this.rows.create(spec);
      await this.arm();
    }
    await this.indexed(stored ?? spec).catch((error: unknown) => {
      // The alarm registers it then: GET /v1/bulk lists it a moment later.
      console.error(JSON.stringify({ message: "bulk job not yet listed; its alarm tries again", id: spec.id, error: String(error) }));
    });
    const job = this.describe()!;
    if (!stored) return { outcome: "created", job };
    return { outcome: sameBulkRequest(stored, spec) ? "existing" : "conflict", job };
  }

  describe(): BulkJobView | undefined {
    const spec = this.rows.spec();
    return spec && toBulkJobView(spec, this.rows.progress());
  }

  override alarm(): Promise<void> {
    this.slice ??= this.runSlice().finally(() => (this.slice = undefined));
    return this.slice;
  }

  /** One slice of the job: settle, read a page, or act, whichever comes first; then the next alarm after a gap. */
  private async runSlice(): Promise<void> {
    const spec = this.rows.spec();
    if (!spec || this.rows.endedAt() !== undefined) return;
    try {
      // An alarm that dies part way (its object reset) runs again after the lease, not after the platform's backoff.
      await this.arm(BULK_LEASE_MS);
      await this.ctx.storage.sync();
      await this.work(spec, withBulkFaults(bulkCaller(this.env, spec), this.env, this.ctx, spec.tenant));
    } catch (error) {
      console.error(JSON.stringify({ message: "bulk job slice failed; the next alarm carries on", id: spec.id, error: String(error) }));
    }
    await this.arm();
  }

  private async work(spec: BulkJobSpec, caller: BulkCaller): Promise<void> {
    await this.indexed(spec);
    const uncertain = this.rows.uncertain();
    if (uncertain.length > 0) return inTurns(uncertain, BULK_CONCURRENCY, (target) => this.settleUncertain(caller, target));
    // Every page first, so `matched` is final early and progress has a fixed goal; then the actions.
    if (!this.rows.listed()) return this.readPages(spec);
    const pending = this.rows.pending(BULK_ACTIONS_PER_ALARM);
    if (pending.length > 0) return inTurns(pending, BULK_CONCURRENCY, (id) => this.actOn(caller, id));
    this.rows.end(Date.now());
    const { matched, done, failed } = this.rows.progress();
    console.log(JSON.stringify({ message: "bulk job done", id: spec.id, tenant: spec.tenant, action: spec.action, matched, done, failed }));
  }

  /** The next pages of the job's matches, each stored with the cursor past it as it comes. */
  private async readPages(spec: BulkJobSpec): Promise<void> {
    for (let pages = 0; pages < BULK_PAGES_PER_ALARM && !this.rows.listed(); pages++) {
      const page = await nextMatchingPage(this.env, spec, this.rows.cursor());
      this.rows.addPage(page.workflowIds, page.next);
    }
  }

  /**
   * Acts on one workflow. A call that throws leaves the row `acting`, to be looked up by the next alarm. A call the
   * workflow refuses after an earlier one of ours may have landed (`since`) is looked up too: a cancel that did land
   * is refused when made again ("already ended"), and counts as the done action it was.
   */
  private async actOn(caller: BulkCaller, workflowId: string, since?: number): Promise<void> {
    this.rows.markActing(workflowId, Date.now());
    let outcome: BulkOutcome;
    try {
      outcome = await caller.act(workflowId);
    } catch (error) {
      console.error(JSON.stringify({ message: "bulk action got no answer; looked up next alarm", workflowId, error: String(error) }));
      return;
    }
    if (!outcome.done && since !== undefined && (await caller.landed(workflowId, since).catch(() => false))) outcome = DONE;
    this.rows.settle(workflowId, outcome);
  }

  /**
   * A workflow whose action may or may not have landed: done if its history shows it, else acted on again. One that
   * cannot even be looked up is tried again next alarm, until BULK_MAX_TRIES, when it counts as failed.
   */
  private async settleUncertain(caller: BulkCaller, target: UncertainTarget): Promise<void> {
    const { workflowId } = target;
    const since = target.actingAt - BULK_CLOCK_SLACK_MS;
    const landed = await caller.landed(workflowId, since).catch(() => "unknown" as const);
    if (landed === true) return this.rows.settle(workflowId, DONE);
    if (landed === "unknown") this.rows.triedAgain(workflowId);
    const tries = target.tries + (landed === "unknown" ? 1 : 0);
    if (tries >= BULK_MAX_TRIES) {
      return this.rows.settle(workflowId, { done: false, error: { code: "unavailable", message: `the workflow did not answer after ${tries} tries` } });
    }
    if (landed !== "unknown") await this.actOn(caller, workflowId, since);
  }

  /** The tenant's list (D1) learns of the job once. */
  private async indexed(spec: BulkJobSpec): Promise<void> {
    if (this.rows.indexed()) return;
    await registerBulkJob(this.env, spec.tenant, spec);
    this.rows.setIndexed();
  }

  /** The one place the alarm is set: `afterMs` on while the job runs (a gap, or a slice's lease), none once it has ended. */
  private async arm(afterMs = BULK_GAP_MS): Promise<void> {
    if (this.rows.endedAt() === undefined) await this.ctx.storage.setAlarm(Date.now() + afterMs);
    else await this.ctx.storage.deleteAlarm();
  }
}
