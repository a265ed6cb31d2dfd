// The files the CLI's tests start from, calling the example remote at `remote`: a definition in JSON, others in
// YAML (as people write them), a schedule, and a worker's command.

export function fixtureFiles(remote: string): Record<string, string> {
  return {
    // Reserve, charge, ship: completes.
    "order.json": JSON.stringify(
      {
        name: "cli-order",
        steps: [
          { id: "reserve", action: { type: "http", url: `${remote}/reserve` }, compensate: { type: "http", url: `${remote}/release` } },
          { id: "charge", action: { type: "http", url: `${remote}/charge`, body: { amount: "{{ input.amount }}" } } },
          { id: "ship", action: { type: "http", url: `${remote}/ship` } },
        ],
      },
      null,
      2,
    ),
    // The charge is declined (422): the reservation is released and the workflow ends compensated.
    "declined.yaml": `
name: cli-declined
steps:
  - id: reserve
    action: { type: http, url: "${remote}/reserve" }
    compensate: { type: http, url: "${remote}/release" }
  - id: charge
    action: { type: http, url: "${remote}/decline" }
`,
    // Waits an hour for an approval, then ships.
    "approval.yaml": `
name: cli-approval
steps:
  - id: approve
    waitForEvent: { event: approved, timeoutMs: 3600000 }
  - id: ship
    action: { type: http, url: "${remote}/ship" }
`,
    // The remote answers 503 twice per idempotency key: two attempts fail it for good, a redrive's third succeeds.
    "flaky.yaml": `
name: cli-flaky
onFailure: fail
steps:
  - id: sync
    action: { type: http, url: "${remote}/flaky" }
    retry: { maxAttempts: 2, initialIntervalMs: 100 }
`,
    // A map over twelve items, two of which the remote declines (422): tolerated, so the map and the workflow succeed.
    "map.yaml": `
name: cli-map
steps:
  - id: thumbs
    map:
      items: [reserve, reserve, decline, reserve, reserve, reserve, reserve, reserve, reserve, decline, reserve, reserve]
      maxConcurrency: 4
      toleratedFailures: 2
      step:
        action: { type: http, url: "${remote}/{{ item }}" }
  - id: ship
    action: { type: http, url: "${remote}/ship" }
`,
    "nightly.yaml": `
id: cli-nightly
cron: "0 3 * * *"
timezone: Europe/Paris
workflow:
  definition:
    name: cli-nightly-report
    steps:
      - id: hold
        waitForEvent: { event: go, timeoutMs: 3600000 }
`,
    "not-a-definition.json": JSON.stringify({ name: "cli-empty", steps: [] }),
    // Reserve at the remote, then a thumbnail made by the user's own worker (shepherd worker, with thumbnail.cjs).
    "thumbnail.yaml": `
name: cli-thumbnail
steps:
  - id: reserve
    action: { type: http, url: "${remote}/reserve" }
  - id: thumbnail
    action: { type: worker, pool: cli-thumbs, input: { src: "{{ input.src }}" } }
`,
    // The worker's command: the task's input on stdin, the task in its environment, the output on stdout.
    "thumbnail.cjs": `
const input = JSON.parse(require("node:fs").readFileSync(0, "utf8"));
console.log(JSON.stringify({ thumbnail: input.src + ".thumb.png", workflowId: process.env.SHEPHERD_WORKFLOW_ID, attempt: process.env.SHEPHERD_ATTEMPT }));
`,
  };
}
