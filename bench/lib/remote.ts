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
import { startFakeRemote } from "../../scripts/lib/fake-remote.ts";
import type { FakeRemote, FakeRemoteCall, Reply } from "../../scripts/lib/fake-remote.ts";

export { now } from "../../scripts/lib/fake-remote.ts";

const OK: Reply = { status: 200, body: { ok: true } };
const RETRIED: Reply = { status: 200, body: { ok: true, retried: true } };

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
      return { status: 202, body: { accepted: true } };
    default:
      return { status: 404, body: { error: `no route ${call.path}` } };
  }
}

/** { url, events, requestsFor(key), close() }: see startFakeRemote. */
export function startRemote(port: number): Promise<FakeRemote> {
  return startFakeRemote({ port, handle: answer });
}
