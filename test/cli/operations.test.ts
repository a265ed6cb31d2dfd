// Every operation of the API has its `shepherd` command: the OpenAPI document's operationIds, read from the app
// itself, against a table of the command that sends each one. A new route fails here until it has its command.
import { beforeAll, describe, expect, it } from "vitest";
import { servedDocument } from "../../scripts/lib/served-openapi.ts";
import { COMMANDS } from "../../src/cli/commands/index";

/** The command that sends each operation (some with a flag, as said). */
const COMMAND_OF_OPERATION: Record<string, string> = {
  startWorkflow: "start",
  startWorkflowsBatch: "start-batch",
  listWorkflows: "list",
  getWorkflow: "get",
  getWorkflowHistory: "history",
  getWorkflowResult: "result",
  getWorkflowDiagnosis: "diagnose",
  listMapItems: "items",
  getAttempt: "attempt",
  cancelWorkflow: "cancel",
  compensateWorkflow: "compensate",
  retryStep: "retry-step",
  skipStep: "skip-step",
  pauseWorkflow: "pause",
  resumeWorkflow: "resume",
  terminateWorkflow: "terminate",
  redriveWorkflow: "redrive",
  sendEvent: "event",
  publishDefinition: "definitions put",
  listDefinitions: "definitions",
  getDefinition: "definitions get",
  // definitions get --version
  getDefinitionVersion: "definitions get",
  listDefinitionVersions: "definitions versions",
  createSchedule: "schedules create",
  listSchedules: "schedules",
  getSchedule: "schedules get",
  deleteSchedule: "schedules delete",
  pauseSchedule: "schedules pause",
  resumeSchedule: "schedules resume",
  triggerSchedule: "schedules trigger",
  listTargets: "targets",
  putWebhook: "webhooks put",
  listWebhooks: "webhooks",
  getWebhook: "webhooks get",
  deleteWebhook: "webhooks delete",
  listWebhookDeliveries: "webhooks deliveries",
  getMetrics: "metrics",
  // metrics --series
  getMetricsSeries: "metrics",
  listPools: "pools",
  listStartDeadLetters: "dead-letters",
  // bulk cancel, terminate, redrive, pause, resume and event
  startBulkJob: "bulk cancel",
  listBulkJobs: "bulk list",
  getBulkJob: "bulk status",
  // A worker's own routes: `shepherd worker` polls, heartbeats and reports.
  pollTasks: "worker",
  heartbeatTask: "worker",
  completeTask: "worker",
  failTask: "worker",
};

let operationIds: string[] = [];

beforeAll(async () => {
  const document = (await servedDocument()) as { paths: Record<string, Record<string, { operationId?: string }>> };
  operationIds = Object.values(document.paths).flatMap((operations) => Object.values(operations).map((operation) => operation.operationId ?? "(none)"));
});

describe("the command line covers the API", () => {
  it("has a row for every operation of the OpenAPI document, and no row for one it lacks", () => {
    expect(operationIds.length).toBeGreaterThan(40);
    expect([...operationIds].sort()).toEqual(Object.keys(COMMAND_OF_OPERATION).sort());
  });

  it.each(Object.entries(COMMAND_OF_OPERATION))("sends %s with `shepherd %s`", (_operationId, name) => {
    expect(COMMANDS.map((command) => command.name)).toContain(name);
  });
});
