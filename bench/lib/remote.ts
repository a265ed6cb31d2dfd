// The "remote service" both engines call: it answers at once unless the path asks for something else, and
// the shared fake-remote server (scripts/lib/fake-remote.ts) records when every request arrived and when
// it was answered, per Idempotency-Key. It runs inside the bench process so the arrival times share the
// harness's clock exactly.
//
//   /ok             200 {ok: true}
//   /fail-once      503 the first time per Idempotency-Key, 200 after (the retry case)
//   /slow?ms=N      200 after N ms (default 5000; the mixed-load case)
//   /hang           never answers (the request stays open until the caller gives up)
//   /hang-once      never answers the first time per Idempotency-Key, 200 after (the detection case)
//   /accept         202 {accepted: true}: the work continues elsewhere (the idle-supervisor case)
//   /callback?to=O  202 {accepted: true}, then, as an asynchronous service does, a report on the request's task
//                   token: POST O/v1/tasks/{Shepherd-Task-Token}/complete {output} (the bill case's third shape)
import { sleep } from "../../scripts/lib/async.ts";
import { startFakeRemote } from "../../scripts/lib/fake-remote.ts";
import type { FakeRemote, FakeRemoteCall, Reply } from "../../scripts/lib/fake-remote.ts";
import { requestJson } from "../../scripts/lib/http-json.ts";

export { now } from "../../scripts/lib/fake-remote.ts";

const OK: Reply = { status: 200, body: { ok: true } };
const RETRIED: Reply = { status: 200, body: { ok: true, retried: true } };
const ACCEPTED: Reply = { status: 202, body: { accepted: true } };
/** The job behind a 202 takes this long, so its report never races the engine's own record of the 202. */
const CALLBACK_AFTER_MS = 20;
const CALLBACK_TRIES = 5;

/** The report on a 202'd request's token, tried again while the engine answers anything but 200. */
async function callBack(origin: string, token: string): Promise<void> {
  for (let attempt = 1; attempt <= CALLBACK_TRIES; attempt++) {
    await sleep(attempt === 1 ? CALLBACK_AFTER_MS : 200);
    const url = `${origin}/v1/tasks/${encodeURIComponent(token)}/complete`;
    const answered = await requestJson(url, { method: "POST", body: { output: { calledBack: true } } }).catch(() => undefined);
    if (answered?.status === 200) return;
  }
}

async function answer(call: FakeRemoteCall): Promise<Reply | undefined> {
  const first = call.requests.length === 1;
  switch (call.path) {
    case "/ok":
      return OK;
    case "/fail-once":
      return first ? { status: 503, body: { error: "try again" } } : RETRIED;
    case "/slow":
      return (await call.pause(Number(call.query.get("ms") ?? 5000))) ? { status: 200, body: { ok: true, slow: true } } : undefined;
    case "/hang":
      return call.hold();
    case "/hang-once":
      return first ? call.hold() : RETRIED;
    case "/accept":
      return ACCEPTED;
    case "/callback": {
      const [origin, token] = [call.query.get("to"), call.req.headers["shepherd-task-token"]];
      if (!origin || typeof token !== "string") return { status: 400, body: { error: "/callback needs ?to= and a Shepherd-Task-Token" } };
      void callBack(origin, token);
      return ACCEPTED;
    }
    default:
      return { status: 404, body: { error: `no route ${call.path}` } };
  }
}

/** { url, events, requestsFor(key), close() }: see startFakeRemote. */
export function startRemote(port: number): Promise<FakeRemote> {
  return startFakeRemote({ port, handle: answer });
}
