// `shepherd worker` as a child process against a fake of the pool and task routes (support/fake-pools.ts): the
// command it runs per task, what the command gets and what becomes of what it prints, and how the worker stops.
import { existsSync } from "node:fs";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { buildCli } from "../../scripts/build-cli.ts";
import { FAKE_TOKEN, startFakePools, type FakePools } from "./support/fake-pools";
import { runCli, scratchFiles, spawnCli, stopWorkerNow } from "./support/run-cli";

/** The command the worker runs: what it does is the task's `mode`. */
const TASK_SCRIPT = `
const input = JSON.parse(require("node:fs").readFileSync(0, "utf8"));
const mark = (what) => require("node:fs").writeFileSync(require("node:path").join(input.dir ?? ".", process.env.SHEPHERD_WORKFLOW_ID + "." + what), "");
const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => name.startsWith("SHEPHERD_") && name !== "SHEPHERD_URL" && name !== "SHEPHERD_TOKEN"));
if (input.mode === "echo") console.log(JSON.stringify({ input, env }));
if (input.mode === "text") console.log("plain words");
if (input.mode === "fail") { process.stderr.write("x".repeat(3000) + "\\nthe real reason\\n"); process.exit(3); }
if (input.mode === "sleep") { mark("started"); setTimeout(() => { mark("finished"); console.log(JSON.stringify({ slept: input.ms })); }, input.ms); }
`;

let fake: FakePools;
let files: ReturnType<typeof scratchFiles>;

beforeAll(async () => {
  await buildCli();
  files = scratchFiles({ "task.cjs": TASK_SCRIPT });
});
afterAll(() => files.remove());
beforeEach(async () => {
  fake = await startFakePools();
});
afterEach(() => fake.close());

/** `shepherd worker --pool gpu … -- node task.cjs`, pointed at the fake. */
function worker(...flags: string[]) {
  return spawnCli(["worker", "--pool", "gpu", ...flags, "--", process.execPath, files.path("task.cjs")], { SHEPHERD_URL: fake.url, SHEPHERD_TOKEN: FAKE_TOKEN });
}

const until = (check: () => void, timeout = 10_000) => vi.waitFor(check, { timeout, interval: 20 });

describe("shepherd worker", () => {
  it("runs the command per task: the input on stdin, the task in its environment, its stdout as the output", async () => {
    const run = worker("--worker-id", "laptop-1", "--concurrency", "3");
    const echo = fake.enqueue("gpu", { mode: "echo", src: "beach" }, { workflowId: "album-7", stepId: "thumbs", index: 4, attempt: 2, idempotencyKey: "album-7:thumbs:4" });
    const text = fake.enqueue("gpu", { mode: "text" });
    const fail = fake.enqueue("gpu", { mode: "fail" });
    await until(() => expect([echo, text, fail].every((task) => task.outcome)).toBe(true));
    const { status, stderr } = await stopWorkerNow(run);

    expect(echo.outcome).toEqual({
      type: "complete",
      output: {
        input: { mode: "echo", src: "beach" },
        env: { SHEPHERD_TASK_TOKEN: echo.token, SHEPHERD_WORKFLOW_ID: "album-7", SHEPHERD_STEP_ID: "thumbs", SHEPHERD_ATTEMPT: "2", SHEPHERD_IDEMPOTENCY_KEY: "album-7:thumbs:4", SHEPHERD_TASK_KIND: "action", SHEPHERD_ITEM_INDEX: "4" },
      },
    });
    expect(text.outcome).toEqual({ type: "complete", output: { text: "plain words" } });
    // A non-zero exit fails the attempt (retryably) with the last kilobyte of stderr.
    expect(fail.outcome).toMatchObject({ type: "fail", error: { retryable: true } });
    const message = fail.outcome?.type === "fail" ? fail.outcome.error.message : "";
    expect(message).toMatch(/^x+\nthe real reason$/);
    expect(message.length).toBeLessThanOrEqual(1024);
    expect(fake.polls[0]).toMatchObject({ workerId: "laptop-1", max: 3 });
    expect(status).toBe(0);
    expect(stderr).toContain("album-7/thumbs[4] attempt 2: completed in");
    expect(stderr).toContain(": failed in");
    expect(stderr).not.toContain(echo.token);
  });

  it("stops gracefully on SIGINT: the poll in flight answered and its task done, the running command finished, nothing lost", async () => {
    const run = worker("--concurrency", "2");
    const running = fake.enqueue("gpu", { mode: "sleep", ms: 600, dir: files.path("") });
    await until(() => expect(existsSync(files.path(`${running.wire.workflowId}.started`))).toBe(true));
    await until(() => expect(fake.waiting()).toBe(1));
    run.child.kill("SIGINT");
    await until(() => expect(run.stderr()).toContain("stopping: no new poll"));
    const handed = fake.enqueue("gpu", { mode: "text" });
    const { status } = await run.finished;

    expect(status).toBe(0);
    expect(running.outcome).toEqual({ type: "complete", output: { slept: 600 } });
    expect(handed.outcome).toEqual({ type: "complete", output: { text: "plain words" } });
    expect(fake.lost()).toEqual([]);
  });

  it("stops at once on a second SIGINT: the running command is stopped and its attempt fails, to be retried", async () => {
    const run = worker("--concurrency", "2");
    const running = fake.enqueue("gpu", { mode: "sleep", ms: 30_000, dir: files.path("") });
    await until(() => expect(existsSync(files.path(`${running.wire.workflowId}.started`))).toBe(true));
    run.child.kill("SIGINT");
    await until(() => expect(run.stderr()).toContain("stopping: no new poll"));
    run.child.kill("SIGINT");
    const { status, stderr } = await run.finished;

    expect(status).toBe(0);
    expect(stderr).toContain("stopping now");
    expect(running.outcome).toMatchObject({ type: "fail", error: { message: expect.stringContaining("was killed by SIGTERM"), retryable: true } });
    expect(existsSync(files.path(`${running.wire.workflowId}.finished`))).toBe(false);
  });

  it("stops the command when the service cancels its attempt, and reports nothing", async () => {
    const run = worker();
    const cancelled = fake.enqueue("gpu", { mode: "sleep", ms: 5_000, dir: files.path("") }, { heartbeatMs: 300 });
    await until(() => expect(existsSync(files.path(`${cancelled.wire.workflowId}.started`))).toBe(true));
    cancelled.state = "cancel_requested";
    await until(() => expect(run.stderr()).toContain("stopped, the service asked to cancel the attempt"));
    expect((await stopWorkerNow(run)).status).toBe(0);
    expect(existsSync(files.path(`${cancelled.wire.workflowId}.finished`))).toBe(false);
    expect(cancelled.outcome).toBeUndefined();
  });

  it("exits 1 when the service refuses the poll (a bad token), 2 without a pool or a command", async () => {
    const [refused, noPool, noCommand] = await Promise.all([
      runCli(["worker", "--pool", "gpu", "--", "true"], { SHEPHERD_URL: fake.url, SHEPHERD_TOKEN: "wrong" }),
      runCli(["worker", "--", "true"], { SHEPHERD_TOKEN: "t" }),
      runCli(["worker", "--pool", "gpu"], { SHEPHERD_TOKEN: "t" }),
    ]);
    expect(refused).toMatchObject({ status: 1, stderr: expect.stringContaining("error: unauthorized: Missing or invalid API token.") });
    expect(noPool).toMatchObject({ status: 2, stderr: expect.stringContaining("error: missing --pool <pool>") });
    expect(noCommand).toMatchObject({ status: 2, stderr: expect.stringContaining('error: missing "-- <command> [<args>...]"') });
  });
});
