// Baseline for the bench: the work of a Shepherd workflow (steps that each POST to a remote service, one
// after the other) as a Cloudflare Workflow with one `step.do` per step.
//
//   POST /instances      {id, steps: [{id, url}], retry: {limit, delay, backoff}, timeoutMs} -> 201 {id}
//   GET  /instances/:id  -> {status, output, error} from instance.status()
//   POST /instances/:id/terminate -> 202 (the bench ends workflows a timed-out run left behind)
//   GET  /healthz        -> {ok: true}
//
// Each step sends the request Shepherd's agent sends (method, headers, JSON body) and classifies the answer
// the same way: 2xx succeeds, 408/425/429/5xx is retried, any other status fails for good.
import { WorkflowEntrypoint, type WorkflowEvent, type WorkflowStep } from "cloudflare:workers";
import { NonRetryableError } from "cloudflare:workflows";

interface Env {
  BENCH_WORKFLOW: Workflow<BenchParams>;
}

interface BenchParams {
  steps: { id: string; url: string }[];
  /** Workflows' retry config; the bench sets it to the equivalent of the Shepherd steps' policy. */
  retry: { limit: number; delay: number; backoff: "constant" | "linear" | "exponential" };
  /** Per-attempt timeout, the counterpart of Shepherd's startToCloseMs. */
  timeoutMs: number;
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

export class BenchWorkflow extends WorkflowEntrypoint<Env, BenchParams> {
  async run(event: WorkflowEvent<BenchParams>, step: WorkflowStep) {
    const { steps, retry, timeoutMs } = event.payload;
    const outputs: Record<string, Json> = {};
    for (const spec of steps) {
      outputs[spec.id] = await step.do(spec.id, { retries: retry, timeout: timeoutMs }, async (ctx) =>
        callRemote(event.instanceId, spec.id, spec.url, ctx.attempt),
      );
    }
    // Stamped when the last step's result is back, like Shepherd's endedAt: the bench's precise completion time.
    return { finishedAt: Date.now(), outputs };
  }
}

const TRANSIENT = new Set([408, 425, 429]);

async function callRemote(workflowId: string, stepId: string, url: string, attempt: number): Promise<Json> {
  const response = await fetch(url, {
    method: "POST",
    headers: {
      "Content-Type": "application/json",
      "Idempotency-Key": `${workflowId}:${stepId}`,
      "Shepherd-Workflow-Id": workflowId,
      "Shepherd-Step-Id": stepId,
      "Shepherd-Attempt": String(attempt),
    },
    body: JSON.stringify({ workflow: workflowId, step: stepId }),
  });
  const text = await response.text();
  if (response.ok) {
    try {
      return text.trim() === "" ? null : (JSON.parse(text) as Json);
    } catch {
      return { text };
    }
  }
  const message = `remote answered ${response.status}: ${text.slice(0, 200)}`;
  if (TRANSIENT.has(response.status) || response.status >= 500) throw new Error(message);
  throw new NonRetryableError(message);
}

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    const url = new URL(request.url);
    if (url.pathname === "/healthz") return Response.json({ ok: true });
    if (url.pathname === "/instances" && request.method === "POST") {
      const body = (await request.json()) as { id: string } & BenchParams;
      try {
        const instance = await env.BENCH_WORKFLOW.create({
          id: body.id,
          params: { steps: body.steps, retry: body.retry, timeoutMs: body.timeoutMs },
        });
        return Response.json({ id: instance.id }, { status: 201 });
      } catch (error) {
        return Response.json({ error: String(error) }, { status: 409 });
      }
    }
    const terminate = /^\/instances\/([^/]+)\/terminate$/.exec(url.pathname);
    if (terminate && request.method === "POST") {
      try {
        await (await env.BENCH_WORKFLOW.get(decodeURIComponent(terminate[1]!))).terminate();
        return Response.json({ ok: true }, { status: 202 });
      } catch (error) {
        return Response.json({ error: String(error) }, { status: 409 });
      }
    }
    const match = /^\/instances\/([^/]+)$/.exec(url.pathname);
    if (match && request.method === "GET") {
      try {
        const instance = await env.BENCH_WORKFLOW.get(decodeURIComponent(match[1]!));
        const { status, output, error } = await instance.status();
        return Response.json({ status, output, error });
      } catch (error) {
        return Response.json({ error: String(error) }, { status: 404 });
      }
    }
    return Response.json({ error: "not found" }, { status: 404 });
  },
} satisfies ExportedHandler<Env>;
