// `shepherd …` run as a child process against the real service under wrangler dev and the example remote,
// started once for the file; independent cases run at the same time.
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { buildCli } from "../../scripts/build-cli.ts";
import { fixtureFiles } from "./support/fixtures";
import { runCli, scratchFiles, spawnCli, stopWorkerNow, type CliRun } from "./support/run-cli";
import { startService, TENANT_TOKEN, UNREACHABLE_URL, type Service } from "./support/service";

let service: Service | undefined;
let files: ReturnType<typeof scratchFiles> | undefined;

beforeAll(async () => {
  // Built once here, so the runs below, started at the same time, find the bundle fresh instead of each building it.
  const [started] = await Promise.all([startService(), buildCli()]);
  service = started;
  files = scratchFiles(fixtureFiles(started.remoteUrl));
});

afterAll(async () => {
  await service?.stop();
  files?.remove();
});

/** The CLI pointed at the tests' service through SHEPHERD_URL and SHEPHERD_TOKEN. */
const shepherd = (...args: string[]) => runCli(args, { SHEPHERD_URL: service?.url, SHEPHERD_TOKEN: TENANT_TOKEN });
const file = (name: string) => files?.path(name) ?? name;
let sequence = 0;
const uniqueId = (prefix: string) => `${prefix}-${Date.now().toString(36)}-${(sequence += 1)}`;

function expectOk(run: CliRun): CliRun {
  expect(run, `stderr: ${run.stderr}`).toMatchObject({ status: 0, stderr: "" });
  return run;
}

describe.concurrent("the command line itself", () => {
  it("prints every command, the global flags and the exit statuses with --help (exit 0)", async () => {
    const help = expectOk(await runCli(["--help"], {}));
    for (const command of ["start [<file>]", "watch <id>", "result <id>", "terminate <id>", "redrive <id>", "compensate <id>", "retry-step <id> <step>", "skip-step <id> <step>", "event <id> <event>", "diagnose <id>", "definitions put <file>", "schedules trigger <id>", "worker --pool <pool> -- <command> [<args>...]"]) {
      expect(help.stdout).toContain(command);
    }
    expect(help.stdout).toMatch(/--url <url>[\s\S]*--token <token>[\s\S]*--json/);
    expect(help.stdout).toMatch(/Exit status:[\s\S]*1 {2}the API refused[\s\S]*2 {2}usage error[\s\S]*3 {2}the service could not be reached[\s\S]*4 {2}watch/);
    expect(expectOk(await runCli(["start", "--help"], {})).stdout).toContain("usage: shepherd start [<file>] [--definition <name>]");
  });

  it("exits 2 for an unknown command, naming it", async () => {
    const run = await runCli(["launch", "x"], { SHEPHERD_TOKEN: "t" });
    expect(run.status).toBe(2);
    expect(run.stderr).toContain('error: unknown command "launch"');
    expect(run.stderr).toContain("usage: shepherd <command>");
  });

  it("exits 2 for an unknown flag, a missing argument or a missing token, with the command's usage line", async () => {
    const [flag, argument, token, file] = await Promise.all([
      runCli(["get", "x", "--colour"], { SHEPHERD_TOKEN: "t" }),
      runCli(["event", "x"], { SHEPHERD_TOKEN: "t" }),
      runCli(["list"], {}),
      runCli(["start", "no-such-file.yaml"], { SHEPHERD_TOKEN: "t" }),
    ]);
    expect(flag).toMatchObject({ status: 2, stderr: "error: unknown flag --colour\nusage: shepherd get <id>\n" });
    expect(argument).toMatchObject({ status: 2, stderr: expect.stringContaining("error: missing <event>\nusage: shepherd event <id> <event>") });
    expect(token).toMatchObject({ status: 2, stderr: expect.stringContaining("no API token: pass --token <token> or set SHEPHERD_TOKEN") });
    expect(file).toMatchObject({ status: 2, stderr: expect.stringContaining("cannot read no-such-file.yaml: ENOENT") });
  });

  it("exits 3 when the service cannot be reached, as text or as JSON", async () => {
    const [text, json] = await Promise.all([
      runCli(["get", "x", "--url", UNREACHABLE_URL, "--token", "t"], {}),
      runCli(["list", "--json"], { SHEPHERD_URL: UNREACHABLE_URL, SHEPHERD_TOKEN: "t" }),
    ]);
    expect(text).toMatchObject({ status: 3, stdout: "" });
    expect(text.stderr).toContain(`error: could not reach ${UNREACHABLE_URL}: connect ECONNREFUSED`);
    expect(json.status).toBe(3);
    expect(JSON.parse(json.stderr)).toMatchObject({ error: { code: "unreachable" } });
  });
});

describe.concurrent("workflows through the CLI", () => {
  it("starts from a JSON file, watches it to completed (exit 0), and reads it with get, history, list and diagnose", async () => {
    const id = uniqueId("json");
    expect(expectOk(await shepherd("start", file("order.json"), "--id", id, "--input", '{"amount":42}')).stdout).toBe(`started ${id} (cli-order): running\n`);

    const watched = expectOk(await shepherd("watch", id));
    expect(watched.stdout).toMatch(new RegExp(`^workflow ${id} \\(cli-order\\): `));
    expect(watched.stdout).toMatch(/step charge: succeeded, attempt 1: \{"chargeId":"ch_\d+","amount":42\}/);
    expect(watched.stdout).toContain("completed, 3/3 steps settled");

    const [get, getJson, history, historyJson, diagnose] = await Promise.all(
      [["get", id], ["get", id, "--json"], ["history", id], ["history", id, "--json"], ["diagnose", id]].map((args) => shepherd(...args)),
    );
    expect(expectOk(get!).stdout).toMatch(/status: +completed/);
    expect(get!.stdout).toMatch(/ship +action +succeeded +1 +\{"trackingId":"trk_\d+"\}/);
    expect(expectOk(getJson!).json()).toMatchObject({ id, status: "completed", output: { charge: { amount: 42 } } });
    expect(expectOk(history!).stdout).toMatch(/^SEQ +AT +TYPE +STEP +BY +DATA\n1 +\S+ +workflow_started/);
    const types = expectOk(historyJson!).json().events.map((event: { type: string }) => event.type);
    expect([types[0], types.at(-1)]).toEqual(["workflow_started", "workflow_completed"]);
    expect(expectOk(diagnose!).stdout).toMatch(/status: +completed\nhealthy: +yes/);

    // The list reads an index that follows each workflow closely, not at once.
    await vi.waitFor(async () => {
      const [list, listJson] = await Promise.all([shepherd("list", "--name", "cli-order"), shepherd("list", "--status", "completed", "--json")]);
      expect(expectOk(list).stdout).toMatch(new RegExp(`\\n${id} +cli-order +completed `));
      expect(expectOk(listJson).json().workflows.map((listed: { id: string }) => listed.id)).toContain(id);
    }, { timeout: 10_000, interval: 250 });
  });

  it("starts from a YAML file; watch exits 4 and says the workflow ended compensated", async () => {
    const id = uniqueId("yaml");
    expectOk(await shepherd("start", file("declined.yaml"), "--id", id));
    const watched = await shepherd("watch", id);
    expect(watched.status).toBe(4);
    expect(watched.stdout).toMatch(/step reserve: compensated, attempt 2/);
    expect(watched.stderr).toBe(`workflow ${id} ended compensated: step "charge" failed: remote answered 422: {"error":"declined"}\n`);
    const json = await shepherd("watch", id, "--json");
    expect(json.status).toBe(4);
    expect(json.json()).toMatchObject({ id, status: "compensated" });
  });

  it("shows a map step's items as counts in watch and get, never the items", async () => {
    const id = uniqueId("map");
    const watched = expectOk(await shepherd("start", file("map.yaml"), "--id", id, "--watch"));
    expect(watched.stdout).toContain("step thumbs: succeeded: 10/12 succeeded, 2 failed\n");
    const get = expectOk(await shepherd("get", id));
    expect(get.stdout).toMatch(/\nthumbs +map +succeeded +- +10\/12 succeeded, 2 failed\n/);
    expect(get.stdout).not.toContain("thumbs#");
  });

  it("starts a published definition by name and sends the event its waiting step takes", async () => {
    const put = expectOk(await shepherd("definitions", "put", file("approval.yaml")));
    expect(put.stdout).toMatch(/^cli-approval v1 \(hash [0-9a-f]{12}, published /);
    const [list, shown] = await Promise.all([shepherd("definitions"), shepherd("definitions", "get", "cli-approval", "--version", "1")]);
    expect(expectOk(list).stdout).toMatch(/\ncli-approval +1 +[0-9a-f]{12} /);
    expect(expectOk(shown).stdout).toMatch(/version: +1[\s\S]*waitForEvent:\n +event: approved/);

    const id = uniqueId("by-name");
    const started = expectOk(await shepherd("start", "--definition", "cli-approval", "--id", id, "--json")).json();
    expect(started).toMatchObject({ id, definition: { name: "cli-approval", version: 1 }, status: "running" });
    const sent = expectOk(await shepherd("event", id, "approved", "--payload", '{"by":"ops"}'));
    expect(sent.stdout).toBe(`approved sent to ${id}: a waiting step took it\n`);
    const watched = expectOk(await shepherd("watch", id));
    expect(watched.stdout).toContain('step approve: succeeded: {"by":"ops"}');
  });

  it("waits with result until the workflow ends: its output once it completes (exit 0), its error once it is terminated (exit 4)", async () => {
    const [done, stopped] = [uniqueId("result"), uniqueId("result")];
    for (const id of [done, stopped]) expectOk(await shepherd("start", file("approval.yaml"), "--id", id));
    const waiting = Promise.all([shepherd("result", done), shepherd("result", stopped)]);

    expectOk(await shepherd("event", done, "approved", "--payload", '{"by":"ops"}'));
    expectOk(await shepherd("terminate", stopped, "--reason", "not needed"));
    const [completed, terminated] = await waiting;

    expect(expectOk(completed).stdout).toMatch(/^\{"approve":\{"by":"ops"\},"ship":\{.*\}\}\n$/);
    expect(terminated).toMatchObject({ status: 4, stdout: "", stderr: `workflow ${stopped} ended terminated: not needed\n` });
    expect(expectOk(await shepherd("result", done, "--json")).json()).toMatchObject({ id: done, status: "completed", output: { approve: { by: "ops" } } });
  });

  it("pauses and resumes a workflow with reasons, which its history shows with who acted", async () => {
    const id = uniqueId("pause");
    expectOk(await shepherd("start", file("approval.yaml"), "--id", id));
    expect(expectOk(await shepherd("pause", id, "--reason", "deploy freeze")).stdout).toBe(`pause ${id}: paused\n`);
    expect(expectOk(await shepherd("get", id, "--json")).json()).toMatchObject({ status: "paused" });
    expect(expectOk(await shepherd("resume", id)).stdout).toBe(`resume ${id}: running\n`);
    expect(expectOk(await shepherd("event", id, "approved", "--reason", "approved by phone")).stdout).toBe(`approved sent to ${id}: a waiting step took it\n`);
    const history = expectOk(await shepherd("history", id)).stdout;
    // The token of the tests has no name: its tenant's acts.
    expect(history).toMatch(/ workflow_paused +cli: "deploy freeze"\n/);
    expect(history).toMatch(/ workflow_resumed +cli +\{"pausedMs":\d+\}\n/);
    expect(history).toMatch(/ event_received +cli: "approved by phone" +\{"event":"approved","buffered":false\}\n/);
  });

  it("starts a workflow later with --delay or --start-at, lists it as scheduled and cancels it before it starts", async () => {
    const [delayed, timed] = [uniqueId("delay"), uniqueId("start-at")];
    const at = new Date(Date.now() + 2 * 86_400_000);
    at.setUTCMilliseconds(0);
    const stamp = at.toISOString().replace(/\.000Z$/, "Z");

    const first = expectOk(await shepherd("start", file("approval.yaml"), "--id", delayed, "--delay", "10m"));
    const second = expectOk(await shepherd("start", file("approval.yaml"), "--id", timed, "--start-at", at.toISOString(), "--json"));

    expect(first.stdout).toMatch(new RegExp(`^scheduled ${delayed} \\(cli-approval\\): starts \\S+Z \\(in (9m 5\\ds|10m 00s)\\)\n$`));
    expect(second.json()).toMatchObject({ id: timed, status: "scheduled", startAt: at.getTime() });
    const shown = expectOk(await shepherd("get", timed)).stdout;
    expect(shown).toMatch(/\nstatus: +scheduled\n/);
    expect(shown).toMatch(new RegExp(`\nstarts: +${stamp} \\(in 1d 23h\\)\n`));
    expect(expectOk(await shepherd("list", "--status", "scheduled")).stdout).toContain(`scheduled, starts ${stamp}`);
    expect(expectOk(await shepherd("cancel", delayed)).stdout).toBe(`cancel ${delayed}: cancelled\n`);
    const both = await shepherd("start", file("approval.yaml"), "--delay", "1h", "--start-at", at.toISOString());
    expect(both).toMatchObject({ status: 2, stderr: expect.stringContaining("give --start-at or --delay, not both") });
  });

  it("cancels a workflow", async () => {
    const id = uniqueId("cancel");
    expectOk(await shepherd("start", file("approval.yaml"), "--id", id));
    const cancelled = expectOk(await shepherd("cancel", id, "--json")).json();
    expect(cancelled).toMatchObject({ id, status: "cancelled" });
    expect((await shepherd("watch", id)).status).toBe(4);
  });

  it("terminates a workflow with a reason; watch exits 4 and says it ended terminated", async () => {
    const id = uniqueId("terminate");
    expectOk(await shepherd("start", file("approval.yaml"), "--id", id));
    expect(expectOk(await shepherd("terminate", id, "--reason", "not needed")).stdout).toBe(`terminate ${id}: terminated\n`);
    const watched = await shepherd("watch", id);
    expect(watched).toMatchObject({ status: 4, stderr: `workflow ${id} ended terminated: not needed\n` });
  });

  it("redrives a failed workflow, which then completes", async () => {
    const id = uniqueId("redrive");
    const failed = await shepherd("start", file("flaky.yaml"), "--id", id, "--watch");
    expect(failed.status).toBe(4);
    expect(failed.stderr).toMatch(new RegExp(`^workflow ${id} ended failed: step "sync" failed: remote answered 503`));
    expect(expectOk(await shepherd("redrive", id)).stdout).toBe(`redrive ${id}: running\n`);
    const watched = expectOk(await shepherd("watch", id));
    expect(watched.stdout).toMatch(/step sync: succeeded, attempt 3/);
  });

  it("manages a schedule: create, list, trigger, pause, resume, delete", async () => {
    expect(expectOk(await shepherd("schedules", "create", file("nightly.yaml"))).stdout).toMatch(/^schedule: +cli-nightly\ncron: +0 3 \* \* \* \(Europe\/Paris\)/);
    expect(expectOk(await shepherd("schedules")).stdout).toMatch(/\ncli-nightly +0 3 \* \* \* +Europe\/Paris +skip +active /);
    expect(expectOk(await shepherd("schedules", "trigger", "cli-nightly")).stdout).toMatch(/^trigger cli-nightly: started cli-nightly:\d+\n$/);
    expect(expectOk(await shepherd("schedules", "pause", "cli-nightly")).stdout).toBe("pause cli-nightly: paused\n");
    expect(expectOk(await shepherd("schedules", "get", "cli-nightly")).stdout).toMatch(/state: +paused[\s\S]*\n\S+ +started +cli-nightly:\d+/);
    expect(expectOk(await shepherd("schedules", "resume", "cli-nightly", "--json")).json()).toMatchObject({ id: "cli-nightly", paused: false });
    expect(expectOk(await shepherd("schedules", "delete", "cli-nightly")).stdout).toBe("deleted schedule cli-nightly\n");
    expect(await shepherd("schedules", "get", "cli-nightly")).toMatchObject({ status: 1, stderr: 'error: not_found: schedule "cli-nightly" not found\n' });
  });
});

describe("a pool's tasks done by shepherd worker", () => {
  it("runs the worker's command for a workflow's worker step: the workflow completes with its output, and the pool lists the worker", async () => {
    const id = uniqueId("worker");
    expectOk(await shepherd("start", file("thumbnail.yaml"), "--id", id, "--input", '{"src":"beach"}'));
    const env = { SHEPHERD_URL: service?.url, SHEPHERD_TOKEN: TENANT_TOKEN };
    const worker = spawnCli(["worker", "--pool", "cli-thumbs", "--worker-id", "cli-test-worker", "--", process.execPath, file("thumbnail.cjs")], env);
    let stopped: CliRun;
    try {
      const watched = expectOk(await shepherd("watch", id, "--json")).json();
      expect(watched.output.thumbnail).toEqual({ thumbnail: "beach.thumb.png", workflowId: id, attempt: "1" });
      const { pools } = (await (await fetch(`${service?.url}/v1/pools`, { headers: { Authorization: `Bearer ${TENANT_TOKEN}` } })).json()) as any;
      expect(pools).toContainEqual(expect.objectContaining({ name: "cli-thumbs", workers: [expect.objectContaining({ id: "cli-test-worker" })] }));
    } finally {
      // Its poll in flight is abandoned: nothing else is offered to this pool.
      stopped = await stopWorkerNow(worker);
    }
    expect(stopped.status).toBe(0);
    expect(stopped.stderr).toContain(`${id}/thumbnail attempt 1: completed in`);
  });
});

describe.concurrent("the API's refusals", () => {
  it("exits 1 with the error's code for a bad token, as text or as the API's JSON body", async () => {
    const env = { SHEPHERD_URL: undefined, SHEPHERD_TOKEN: undefined };
    const [text, json] = await Promise.all([
      runCli(["list", "--url", service?.url ?? "", "--token", "wrong"], env),
      runCli(["list", "--url", service?.url ?? "", "--token", "wrong", "--json"], env),
    ]);
    expect(text).toMatchObject({ status: 1, stdout: "" });
    expect(text.stderr).toMatch(/^error: unauthorized: /);
    expect(json).toMatchObject({ status: 1, stdout: "" });
    expect(JSON.parse(json.stderr)).toMatchObject({ error: { code: "unauthorized" } });
  });

  it("exits 1 for a workflow that does not exist and for a definition the service refuses, with its details", async () => {
    const [missing, refused] = await Promise.all([shepherd("get", "no-such-workflow"), shepherd("start", file("not-a-definition.json"), "--json")]);
    expect(missing).toMatchObject({ status: 1, stderr: 'error: not_found: No workflow "no-such-workflow".\n' });
    expect(refused.status).toBe(1);
    const body = JSON.parse(refused.stderr);
    expect(body.error.code).toBe("validation_failed");
    expect(body.error.details).toContainEqual(expect.objectContaining({ path: ["definition", "steps"] }));
  });
});

/** `count` workflows of the definition `name` that wait for an event, started straight through the API. */
async function startWaiting(name: string, count: number): Promise<string[]> {
  const definition = { name, steps: [{ id: "approve", waitForEvent: { event: "approved", timeoutMs: 600_000 } }] };
  return Promise.all(
    Array.from({ length: count }, async () => {
      const id = uniqueId(name);
      const response = await fetch(`${service?.url}/v1/workflows`, { method: "POST", headers: { Authorization: `Bearer ${TENANT_TOKEN}`, "Content-Type": "application/json" }, body: JSON.stringify({ id, definition }) });
      expect(response.status).toBe(201);
      return id;
    }),
  );
}

/** Waits until the list (an index that follows each workflow closely) holds all of them. */
async function listed(name: string, count: number): Promise<void> {
  await vi.waitFor(async () => expect(expectOk(await shepherd("list", "--name", name, "--json")).json().workflows).toHaveLength(count), { timeout: 10_000, interval: 250 });
}

describe.concurrent("bulk operations through the CLI", () => {
  it("cancels every running workflow of a definition with bulk cancel --wait; bulk status and bulk list show the job", async () => {
    const name = uniqueId("cli-bulk");
    await startWaiting(name, 3);
    await listed(name, 3);

    const run = expectOk(await shepherd("bulk", "cancel", "--status", "running", "--name", name, "--reason", "release rolled back", "--wait"));
    const id = /^bulk job (\S+): cancel of the workflows matching status=running name=/.exec(run.stdout)?.[1];
    expect(id, run.stdout).toBeDefined();
    expect(run.stdout).toMatch(/done: 3 matched, 3 done, 0 failed\n/);
    expect(run.stdout).toMatch(/reason: +release rolled back\n[\s\S]*matched: +3\ndone: +3\nfailed: +0\n/);

    const [status, list] = await Promise.all([shepherd("bulk", "status", id!, "--json"), shepherd("bulk", "list")]);
    expect(expectOk(status).json()).toMatchObject({ id, action: "cancel", status: "done", matched: 3, done: 3, failed: 0, reason: "release rolled back", filter: { status: "running", name } });
    expect(expectOk(list).stdout).toMatch(new RegExp(`\\n${id} +cancel +done +3/3 +0 `));
  });

  it("sends an event with bulk event, and bulk status --wait lists the workflows that refused it and why", async () => {
    const name = uniqueId("cli-bulk-event");
    const [ended, waiting] = await startWaiting(name, 2);
    expectOk(await shepherd("cancel", ended!));
    await listed(name, 2);

    const job = expectOk(await shepherd("bulk", "event", "approved", "--name", name, "--payload", '{"by":"ops"}', "--json")).json();
    expect(job).toMatchObject({ action: "event", event: { event: "approved", payload: { by: "ops" } }, status: "running" });
    const status = expectOk(await shepherd("bulk", "status", job.id, "--wait"));

    expect(status.stdout).toMatch(/matched: +2\ndone: +1\nfailed: +1\n/);
    expect(status.stdout).toMatch(new RegExp(`WORKFLOW +CODE +WHY\\n${ended} +conflict +workflow has already ended \\(cancelled\\)`));
    expect(expectOk(await shepherd("get", waiting!, "--json")).json()).toMatchObject({ status: "completed", output: { approve: { by: "ops" } } });
  });

  it("answers the same job when bulk pause --id runs again, so a retried command acts once", async () => {
    const name = uniqueId("cli-bulk-retried");
    const id = uniqueId("cli-job");

    const first = expectOk(await shepherd("bulk", "pause", "--name", name, "--id", id, "--json")).json();
    const again = expectOk(await shepherd("bulk", "pause", "--name", name, "--id", id, "--json")).json();
    const other = await shepherd("bulk", "resume", "--name", name, "--id", id);

    expect(first).toMatchObject({ id, action: "pause" });
    expect(again).toMatchObject({ id, createdAt: first.createdAt });
    expect(other.status).toBe(1);
    expect(other.stderr).toMatch(/^error: conflict: /);
  });

  it("refuses an empty filter or a time it cannot read before sending anything (exit 2), and shows the API's refusal (exit 1)", async () => {
    const [empty, time, refused] = await Promise.all([
      runCli(["bulk", "cancel", "--reason", "x"], { SHEPHERD_URL: UNREACHABLE_URL, SHEPHERD_TOKEN: "t" }),
      runCli(["bulk", "pause", "--created-before", "yesterday"], { SHEPHERD_URL: UNREACHABLE_URL, SHEPHERD_TOKEN: "t" }),
      shepherd("bulk", "pause", "--status", "asleep"),
    ]);
    expect(empty).toMatchObject({ status: 2, stderr: expect.stringContaining("error: give at least one of --status, --name") });
    expect(time).toMatchObject({ status: 2, stderr: expect.stringContaining('error: --created-before must be epoch milliseconds or an ISO 8601 time (got "yesterday")') });
    expect(refused.status).toBe(1);
    expect(refused.stderr).toMatch(/^error: validation_failed: Invalid request: filter\.status must be one of "running", /);
  });
});
