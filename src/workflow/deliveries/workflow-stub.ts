import type { CommandRequest } from "../../domain/language/operator-commands";
import type { ChildEndNotice } from "../../domain/machine";
import type { StartRequest, StartResult } from "../rpc";

/**
 * The methods one workflow's object calls on another's (its child's start and close, its parent's notice),
 * declared here so the outbox needs no import of the object's class (whose types reach back to the outbox).
 */
export interface WorkflowObjectStub {
  start(request: StartRequest): Promise<StartResult>;
  command(request: CommandRequest): Promise<{ ok: boolean; code?: string; message?: string }>;
  childEnded(notice: ChildEndNotice): Promise<{ ok: boolean; applied?: boolean; code?: string }>;
}

/** A workflow's object is named by tenant and id, so two tenants can use the same workflow id. */
export function workflowObjectName(tenant: string, workflowId: string): string {
  return `${tenant}:${workflowId}`;
}

export function workflowObject(env: Env, tenant: string, workflowId: string): WorkflowObjectStub {
  return env.WORKFLOW_SCHEDULER.getByName(workflowObjectName(tenant, workflowId)) as unknown as WorkflowObjectStub;
}
