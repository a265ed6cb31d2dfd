import { exports } from "cloudflare:workers";
import { expect, vi } from "vitest";

export interface ApiResponse<T = any> {
  status: number;
  body: T;
}

/** The API tokens of the test tenants; vitest.config.ts gives the Worker the same `API_TOKENS`. */
export const TOKENS = {
  default: "test-token-default",
  alpha: "test-token-alpha",
  beta: "test-token-beta",
  gamma: "test-token-gamma",
  lister: "test-token-lister",
} as const;

export type TestTenant = keyof typeof TOKENS;

/** A named token of tenant "default" (`default:alice:<token>`): its actions are recorded as alice's. */
export const NAMED_TOKEN = { tenant: "default", name: "alice", token: "test-token-alice" } as const;

export function bearer(tenant: TestTenant = "default"): { Authorization: string } {
  return { Authorization: `Bearer ${TOKENS[tenant]}` };
}

/** Calls the Worker's own fetch handler, as a client would: as tenant "default" unless the headers say otherwise. */
export async function api<T = any>(method: string, path: string, body?: unknown, init: RequestInit = {}): Promise<ApiResponse<T>> {
  const headers = new Headers(init.headers);
  if (!headers.has("Authorization")) headers.set("Authorization", bearer().Authorization);
  if (body !== undefined && !headers.has("Content-Type")) headers.set("Content-Type", "application/json");
  const response = await exports.default.fetch(`http://shepherd.test${path}`, {
    method,
    ...init,
    headers,
    ...(body === undefined ? {} : { body: typeof body === "string" ? body : JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined };
}

let counter = 0;
/** Storage is shared by the tests of a file, so each test uses its own workflow id. */
export function uniqueId(prefix = "wf"): string {
  counter += 1;
  return `${prefix}-${Date.now().toString(36)}-${counter}`;
}

export async function start(definition: unknown, options: { id?: string; input?: unknown } = {}) {
  const id = options.id ?? uniqueId();
  const response = await api("POST", "/v1/workflows", { id, definition, ...("input" in options ? { input: options.input } : {}) });
  expect(response.status, JSON.stringify(response.body)).toBe(201);
  return { id, workflow: response.body };
}

/** Starts a workflow as `tenant`, under its own id unless one is given; returns the id. */
export async function startAs(tenant: TestTenant, definition: unknown, id = uniqueId(tenant)): Promise<string> {
  const response = await api("POST", "/v1/workflows", { id, definition }, { headers: bearer(tenant) });
  expect(response.status, JSON.stringify(response.body)).toBe(201);
  return id;
}

/** What the owner sees of a workflow: enough to notice any change another caller could have made. */
export async function snapshot(tenant: TestTenant, id: string) {
  const workflow = await api("GET", `/v1/workflows/${id}`, undefined, { headers: bearer(tenant) });
  const history = await api("GET", `/v1/workflows/${id}/history`, undefined, { headers: bearer(tenant) });
  expect(workflow.status).toBe(200);
  expect(history.status).toBe(200);
  return { status: workflow.body.status as string, historyLength: history.body.events.length as number, workflow: workflow.body };
}

export async function getWorkflow(id: string) {
  const response = await api("GET", `/v1/workflows/${id}`);
  expect(response.status).toBe(200);
  return response.body;
}

export async function historyOf(id: string): Promise<{ seq: number; at: number; type: string; stepId?: string; attempt?: number; data?: any }[]> {
  const response = await api("GET", `/v1/workflows/${id}/history`);
  expect(response.status).toBe(200);
  return response.body.events;
}

/**
 * Waits until the workflow reaches the status through the real queue and agents: for work to run, not for a
 * deadline to pass (a test moves time past a deadline instead: ./time.ts).
 */
export async function waitForStatus(id: string, status: string, timeout = 10_000) {
  return vi.waitFor(
    async () => {
      const workflow = await getWorkflow(id);
      expect(workflow.status).toBe(status);
      return workflow;
    },
    { timeout, interval: 20 },
  );
}

/** Waits until a step reaches the status. */
export async function waitForStep(id: string, stepId: string, status: string, timeout = 10_000) {
  return vi.waitFor(
    async () => {
      const workflow = await getWorkflow(id);
      const step = workflow.steps.find((s: { id: string }) => s.id === stepId);
      expect(step?.status).toBe(status);
      return workflow;
    },
    { timeout, interval: 20 },
  );
}
