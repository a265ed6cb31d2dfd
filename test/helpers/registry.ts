// The definitions registry as the tests use it: publishing and reading definitions, and starting by reference.
import { expect } from "vitest";
import { DefinitionSchema, definitionHash } from "../../src/domain/language/definition";
import { api, bearer, uniqueId, type ApiResponse, type TestTenant } from "./api";
import { httpStep } from "./remote";

/** `PUT /v1/definitions/{name}` with the definition's own name, as `tenant`. */
export function publish(definition: { name: string } & Record<string, unknown>, tenant: TestTenant = "default"): Promise<ApiResponse> {
  return api("PUT", `/v1/definitions/${definition.name}`, definition, { headers: bearer(tenant) });
}

/** Publishes new content and expects it stored as `version`; returns what the registry answered. */
export async function publishNew(definition: { name: string } & Record<string, unknown>, version: number, tenant: TestTenant = "default") {
  const response = await publish(definition, tenant);
  expect(response.status, JSON.stringify(response.body)).toBe(201);
  expect(response.body).toMatchObject({ name: definition.name, version });
  return response.body as { name: string; version: number; hash: string; createdAt: number };
}

/** `GET` a registry path as `tenant`. */
export function read(path: string, tenant: TestTenant = "default"): Promise<ApiResponse> {
  return api("GET", path, undefined, { headers: bearer(tenant) });
}

/** `POST /v1/workflows` with a `definitionRef`, under a fresh id unless one is given. */
export function startByRef(definitionRef: { name: string; version?: number }, options: { id?: string; input?: unknown; tenant?: TestTenant } = {}) {
  const id = options.id ?? uniqueId("by-ref");
  const body = { id, definitionRef, ...(options.input === undefined ? {} : { input: options.input }) };
  return api("POST", "/v1/workflows", body, { headers: bearer(options.tenant ?? "default") }).then((response) => ({ id, response }));
}

/** A one-step definition whose step id (and the path it calls) says which version it is. */
export function versioned(name: string, tag: string, extra: Record<string, unknown> = {}) {
  return { name, steps: [httpStep(`step-${tag}`)], ...extra };
}

/** The content hash the registry gives a definition (hex SHA-256 of its canonical JSON). */
export function hashOf(definition: unknown): Promise<string> {
  return definitionHash(DefinitionSchema.parse(definition));
}
