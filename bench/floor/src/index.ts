// The floor for `npm run bench`: the smallest correct durable workflow engine on this runtime, the least a durable
// step can cost here. One Durable Object per workflow, with SQLite storage; its alarm runs the steps in order, each
// a POST to the remote over fetch, and each step's answer is one row, committed before the next step is sent (the
// output gate holds the next fetch until the row is durable). A crash loses nothing written: the alarm runs again
// from the first step without a row. No queue, no history, no index, no timers, no supervisor: whatever Shepherd
// spends beyond this is its overhead.
//
//   POST /workflows                  {id, steps: [{id, url}], retry, timeoutMs} -> 201 {id}, or 200 for a known id
//   GET  /workflows/:id              -> {status: running | completed | failed | cancelled, endedAt}
//   POST /workflows/:id/cancel       -> 202
//   POST /v1/tasks/:token/complete   {output} -> 200: a remote that answered 202 reports here, as it would to Shepherd
//   GET  /healthz
import { DurableObject } from "cloudflare:workers";

interface Spec {
  id: string;
  steps: { id: string; url: string }[];
  retry: { maxAttempts: number; initialIntervalMs: number; backoffCoefficient?: number };
  timeoutMs: number;
}

interface Env {
  FLOOR: DurableObjectNamespace<FloorWorkflow>;
}

/** What the rows say: the spec, the steps done (rows 1 … done), the last row's time, and how it ended if not completed. */
interface State {
  spec: Spec;
  done: number;
  lastAt: number;
  ended?: string;
}

type Answer = { kind: "ok"; output: unknown } | { kind: "accepted" } | { kind: "failed"; retryable: boolean };

/** Row 0 is the spec, row n step n's answer; a workflow that ended without completing has this row too. */
const ENDED = 1_000_000;
const TRANSIENT = new Set([408, 425, 429]);

export class FloorWorkflow extends DurableObject<Env> {
  private readonly sql = this.ctx.storage.sql;
  /** Read once per instance, then kept with every write. */
  private state?: State;
  /** Attempts per step since this instance loaded: a restart forgets them (the floor bounds no retries across crashes). */
  private readonly attempts = new Map<number, number>();

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.sql.exec("CREATE TABLE IF NOT EXISTS log (seq INTEGER PRIMARY KEY, body TEXT NOT NULL, at INTEGER NOT NULL)");
  }

  async start(spec: Spec): Promise<boolean> {
    if (this.load()) return false;
    this.write(0, spec);
    await this.ctx.storage.setAlarm(Date.now());
    return true;
  }

  status(): { status: string; endedAt?: number } {
    const state = this.load();
    if (!state) return { status: "unknown" };
    const status = state.ended ?? (state.done === state.spec.steps.length ? "completed" : "running");
    return status === "running" ? { status } : { status, endedAt: state.lastAt };
  }

  async cancel(): Promise<void> {
    if (!this.load() || this.status().status !== "running") return;
    this.write(ENDED, "cancelled");
    await this.ctx.storage.deleteAlarm();
  }

  /** The remote's report on a step it answered 202; the alarm sends the next step (a crash meanwhile loses nothing). */
  async complete(index: number, output: unknown): Promise<boolean> {
    const state = this.load();
    if (!state || state.ended || state.done !== index - 1) return false;
    this.write(index, output);
    if (state.done < state.spec.steps.length) await this.ctx.storage.setAlarm(Date.now());
    return true;
  }

  override async alarm(): Promise<void> {
    const state = this.load();
    while (state && !state.ended && state.done < state.spec.steps.length) {
      const index = state.done + 1;
      const answer = await this.call(state.spec, index);
      // A report on the token or a cancel may have come while the request was out.
      if (state.done >= index || state.ended) return;
      if (answer.kind === "accepted") return;
      if (answer.kind === "failed") return this.failed(state.spec, index, answer.retryable);
      this.write(index, answer.output);
    }
  }

  private async failed(spec: Spec, index: number, retryable: boolean): Promise<void> {
    const spent = this.attempts.get(index) ?? 1;
    if (!retryable || spent >= spec.retry.maxAttempts) return this.write(ENDED, "failed");
    await this.ctx.storage.setAlarm(Date.now() + spec.retry.initialIntervalMs * (spec.retry.backoffCoefficient ?? 2) ** (spent - 1));
  }

  /** The request Shepherd's agent sends, classified as Shepherd classifies it by default. */
  private async call(spec: Spec, index: number): Promise<Answer> {
    const step = spec.steps[index - 1]!;
    const attempt = (this.attempts.get(index) ?? 0) + 1;
    this.attempts.set(index, attempt);
    const headers = {
      "Content-Type": "application/json",
      "Idempotency-Key": `${spec.id}:${step.id}`,
      "Shepherd-Workflow-Id": spec.id,
      "Shepherd-Step-Id": step.id,
      "Shepherd-Attempt": String(attempt),
      "Shepherd-Task-Token": `${spec.id}.${index}`,
    };
    try {
      const body = JSON.stringify({ workflow: spec.id, step: step.id });
      const response = await fetch(step.url, { method: "POST", headers, body, signal: AbortSignal.timeout(spec.timeoutMs) });
      const text = await response.text();
      if (response.status === 202) return { kind: "accepted" };
      if (response.ok) return { kind: "ok", output: text.trim() === "" ? null : JSON.parse(text) };
      return { kind: "failed", retryable: TRANSIENT.has(response.status) || response.status >= 500 };
    } catch {
      return { kind: "failed", retryable: true };
    }
  }

  private load(): State | undefined {
    if (this.state) return this.state;
    const rows = this.sql.exec<{ seq: number; body: string; at: number }>("SELECT seq, body, at FROM log ORDER BY seq").toArray();
    const [first, last] = [rows[0], rows.at(-1)];
    if (!first || !last) return undefined;
    const ended = last.seq === ENDED ? String(JSON.parse(last.body)) : undefined;
    this.state = { spec: JSON.parse(first.body) as Spec, done: rows.length - 1 - (ended ? 1 : 0), lastAt: last.at, ended };
    return this.state;
  }

  /** One row, one statement: the whole of the floor's storage work. */
  private write(seq: number, body: unknown): void {
    const at = Date.now();
    this.sql.exec("INSERT INTO log (seq, body, at) VALUES (?, ?, ?)", seq, JSON.stringify(body), at);
    if (seq === 0) this.state = { spec: body as Spec, done: 0, lastAt: at };
    else if (this.state && seq === ENDED) Object.assign(this.state, { ended: body, lastAt: at });
    else if (this.state) Object.assign(this.state, { done: seq, lastAt: at });
  }
}

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    const { pathname } = new URL(request.url);
    const [, first, second, third, fourth] = pathname.split("/").map(decodeURIComponent);
    if (pathname === "/healthz") return Response.json({ ok: true });
    if (first === "workflows" && second === undefined && request.method === "POST") {
      const spec = (await request.json()) as Spec;
      const created = await env.FLOOR.getByName(spec.id).start(spec);
      return Response.json({ id: spec.id }, { status: created ? 201 : 200 });
    }
    if (first === "workflows" && second && third === undefined && request.method === "GET") {
      const status = await env.FLOOR.getByName(second).status();
      return Response.json(status, { status: status.status === "unknown" ? 404 : 200 });
    }
    if (first === "workflows" && second && third === "cancel" && request.method === "POST") {
      await env.FLOOR.getByName(second).cancel();
      return Response.json({ ok: true }, { status: 202 });
    }
    if (first === "v1" && second === "tasks" && third && fourth === "complete" && request.method === "POST") {
      const [id, index] = [third.slice(0, third.lastIndexOf(".")), Number(third.slice(third.lastIndexOf(".") + 1))];
      const { output } = (await request.json()) as { output?: unknown };
      const taken = await env.FLOOR.getByName(id).complete(index, output ?? null);
      return Response.json({ ok: taken }, { status: taken ? 200 : 409 });
    }
    return Response.json({ error: "not found" }, { status: 404 });
  },
} satisfies ExportedHandler<Env>;
