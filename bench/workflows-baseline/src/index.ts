// Baseline for the bench: Shepherd's work as Cloudflare Workflows, written the way their users would.
//   BenchWorkflow (/instances): a workflow of sequential steps (each a POST to a remote), one `step.do` per step.
//   FanOutWorkflow (/fan-outs): a map step over N items, one instance doing `Promise.all` of a `step.do` per item.
//
//   POST /instances      {id, steps: [{id, url}], retry: {limit, delay, backoff}, timeoutMs} -> 201 {id}
//   POST /fan-outs       {id, items: [...], url, retry, timeoutMs} -> 201 {id}
//   GET  /<kind>/:id     -> {status, output, error} from instance.status()
//   POST /<kind>/:id/terminate -> 202 (the bench ends workflows a timed-out run left behind)
//   POST /v1/tasks/:token/complete {output} -> 200: a remote that answered 202 reports, as it would to Shepherd;
//        the report is sent to the instance as the event its step waits for
//   GET  /healthz        -> {ok: true}
import { reportType, type BenchParams } from "./bench-workflow";
import type { FanOutParams } from "./fan-out-workflow";

export { BenchWorkflow } from "./bench-workflow";
export { FanOutWorkflow } from "./fan-out-workflow";

interface Env {
  BENCH_WORKFLOW: Workflow<BenchParams>;
  FAN_OUT_WORKFLOW: Workflow<FanOutParams>;
}

/** Each kind's binding and the params a create takes from the request body. */
const KINDS = {
  instances: {
    binding: (env: Env): Workflow => env.BENCH_WORKFLOW,
    params: ({ steps, retry, timeoutMs }: BenchParams) => ({ steps, retry, timeoutMs }),
  },
  "fan-outs": {
    binding: (env: Env): Workflow => env.FAN_OUT_WORKFLOW,
    params: ({ items, url, retry, timeoutMs }: FanOutParams) => ({ items, url, retry, timeoutMs }),
  },
} as const;

type Kind = keyof typeof KINDS;
const isKind = (name: string | undefined): name is Kind => name !== undefined && Object.hasOwn(KINDS, name);

/** A report on a task token (`<instance>.<step>`, see bench-workflow.ts), sent to the instance as its step's event. */
async function report(env: Env, token: string, request: Request): Promise<Response> {
  const [id, stepId] = [token.slice(0, token.lastIndexOf(".")), token.slice(token.lastIndexOf(".") + 1)];
  const { output } = (await request.json()) as { output?: unknown };
  return answer(200, async () => (await (await env.BENCH_WORKFLOW.get(id)).sendEvent({ type: reportType(stepId), payload: output ?? null }), { ok: true }));
}

/** Any failure of the platform call as one JSON answer: the bench reads the status, the text is for people. */
async function answer(status: number, call: () => Promise<unknown>): Promise<Response> {
  try {
    return Response.json(await call(), { status });
  } catch (error) {
    return Response.json({ error: String(error) }, { status: status === 200 ? 404 : 409 });
  }
}

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    const url = new URL(request.url);
    if (url.pathname === "/healthz") return Response.json({ ok: true });
    const [, kind, rawId, action] = url.pathname.split("/");
    const reported = /^\/v1\/tasks\/([^/]+)\/complete$/.exec(url.pathname)?.[1];
    if (reported && request.method === "POST") return report(env, decodeURIComponent(reported), request);
    if (!isKind(kind)) return Response.json({ error: "not found" }, { status: 404 });
    const workflow = KINDS[kind].binding(env);
    if (rawId === undefined && request.method === "POST") {
      const body = (await request.json()) as { id: string } & BenchParams & FanOutParams;
      return answer(201, async () => ({ id: (await workflow.create({ id: body.id, params: KINDS[kind].params(body) })).id }));
    }
    const id = decodeURIComponent(rawId ?? "");
    if (action === "terminate" && request.method === "POST") return answer(202, async () => (await (await workflow.get(id)).terminate(), { ok: true }));
    if (action === undefined && request.method === "GET") {
      return answer(200, async () => {
        const { status, output, error } = await (await workflow.get(id)).status();
        return { status, output, error };
      });
    }
    return Response.json({ error: "not found" }, { status: 404 });
  },
} satisfies ExportedHandler<Env>;
