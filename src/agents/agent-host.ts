import { DurableObject } from "cloudflare:workers";
import { withInjectedFaults } from "../dev/fault-bindings";
import type { ClaimedTask } from "../domain/machine";
import type { TaskMessage } from "../domain/machine/task-message";
import { schedulerFor } from "../workflow/client";
import { performTask } from "./perform-task";
import { learnBreaker } from "./breaker-guard";
import type { BreakerNotice } from "../breakers/breaker-rpc";
import { agentHostShards } from "../config";
import { fairShareSlot } from "../domain/admission/fair-share";
import { agentHostName, type AttemptOnHost, type HandOff, type HandOffResult, type TakeOptions } from "./host-shard";

/**
 * Attempts a host runs at once before it turns down a start's hand-off: past that, the workflow's object sends the
 * attempt through the queue, whose lag is what the front door's back-pressure watches. Across the 64 default
 * hosts, about a thousand attempts run without a queue hop.
 */
const HAND_OFF_ROOM = 16;
/**
 * A host full of one tenant's burst still takes a hand-off for a tenant (or workflow name) that runs fewer than
 * this many attempts on it: the quiet tenant's work skips the queue that the noisy one filled, instead of waiting
 * behind its backlog. No ceiling on the host's total: the noisy tenant's follow-ups (eager dispatch) run past the
 * room anyway, and a ceiling they fill sent the quiet tenant's first attempts to the back of the queue (the soak's
 * noisy neighbour: p99 6.5 s); each tenant and name adds at most this many per host.
 */
const FAIR_SHARE_FLOOR = 2;
/** A place a start's hand-off reserved is held this long: its start commits and hands the attempt over well within. */
const RESERVATION_MS = 5_000;

/**
 * Where attempts run. `take` claims the message's attempt and returns as soon as it has started; the work (the
 * remote call, heartbeats, the report) goes on in this object, so the queue consumer is free for the next batch.
 * The claim is made here, just before the request, not by the consumer: a consumer that dies before handing
 * the message over leaves it unacknowledged, so the queue delivers it again and nothing is lost or counted.
 * Holds no state: if the object is evicted mid-attempt, heartbeats stop and the supervisor retries the attempt.
 */
export class AgentHost extends DurableObject<Env> {
  constructor(ctx: DurableObjectState, env: Env) {
    // Dev and tests: the workflow objects, as this host's agents reach them, fail as the fault settings say.
    super(ctx, withInjectedFaults(env));
  }

  /** Attempts running here per tenant and workflow name (see fairShareKey); their sum is the host's load. */
  private readonly runningByKey = new Map<string, number>();
  /** Places held for a start's hand-off, by the same key: when each lapses. They count towards the load. */
  private readonly reservedByKey = new Map<string, number[]>();

  /**
   * A start asks for room for one of its first attempts before it commits (see reserveAgentHosts): true when this
   * host takes it under the room or fair-share rule, and then holds the place until `run` brings the attempt.
   */
  reserve(attempt: AttemptOnHost): boolean {
    if (!this.hasRoomFor(attempt, "room")) return false;
    const key = fairShareKey(attempt);
    this.reservedByKey.set(key, [...this.liveReservations(key), Date.now() + RESERVATION_MS]);
    return true;
  }

  /** An attempt its workflow's object claimed for this host (a start's hand-off): it runs here, with no claim. */
  run(message: TaskMessage, task: ClaimedTask): void {
    const key = fairShareKey(message);
    this.reservedByKey.set(key, this.liveReservations(key).slice(1));
    this.perform(message, task);
  }

  async take(message: TaskMessage, options: TakeOptions = {}): Promise<HandOffResult> {
    if (options.handOff && !this.hasRoomFor(message, options.handOff)) return { started: false, reason: "busy" };
    // A redelivered or stale message is refused here, before anything reaches the remote.
    const claim = await schedulerFor(this.env, message.tenant, message.workflowId).claim(message.stepId, message.attempt);
    if (!claim.ok) return { started: false, reason: claim.code };
    this.perform(message, claim.task);
    return { started: true };
  }

  /** A host's breaker opened or closed: the agents in this isolate learn it before their next attempt there. */
  learnBreaker(notice: BreakerNotice): void {
    learnBreaker(notice);
  }

  private hasRoomFor(attempt: Pick<TaskMessage, "tenant" | "name">, handOff: HandOff): boolean {
    if (handOff === "room" && this.load() < HAND_OFF_ROOM) return true;
    const key = fairShareKey(attempt);
    return (this.runningByKey.get(key) ?? 0) + this.liveReservations(key).length < FAIR_SHARE_FLOOR;
  }

  private perform(message: TaskMessage, task: ClaimedTask): void {
    const key = fairShareKey(message);
    this.runningByKey.set(key, (this.runningByKey.get(key) ?? 0) + 1);
    void performTask(message, task, this.env).finally(() => {
      const left = (this.runningByKey.get(key) ?? 1) - 1;
      if (left === 0) this.runningByKey.delete(key);
      else this.runningByKey.set(key, left);
    });
  }

  /** Attempts running here and places held for them. */
  private load(): number {
    let count = 0;
    for (const n of this.runningByKey.values()) count += n;
    for (const key of this.reservedByKey.keys()) count += this.liveReservations(key).length;
    return count;
  }

  /** The key's places not yet lapsed; lapsed ones are dropped as they are found. */
  private liveReservations(key: string): number[] {
    const now = Date.now();
    const live = (this.reservedByKey.get(key) ?? []).filter((until) => until > now);
    if (live.length === 0) this.reservedByKey.delete(key);
    else this.reservedByKey.set(key, live);
    return live;
  }
}

/** Whose attempt this is, for the hosts' fair share: the tenant and, within it, the workflow's name. */
function fairShareKey(message: Pick<TaskMessage, "tenant" | "name">): string {
  return fairShareSlot({ tenant: message.tenant, name: message.name ?? "" });
}

/** Tells every agent host, and so every isolate that runs agents, that a breaker opened or closed. Rare: one call per host. */
export async function tellEveryAgentHost(env: Env, notice: BreakerNotice): Promise<void> {
  await Promise.allSettled(Array.from({ length: agentHostShards(env) }, (_, shard) => env.AGENT_HOST.getByName(agentHostName(shard)).learnBreaker(notice)));
}
