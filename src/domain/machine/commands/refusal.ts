import type { CommandReply } from "../../language/operator-commands";

export type Refusal = Extract<CommandReply, { ok: false }>;

export function conflict(message: string): Refusal & { code: "conflict" } {
  return { ok: false, code: "conflict", message };
}

export function noSuchStep(stepId: string): Refusal & { code: "not_found" } {
  return { ok: false, code: "not_found", message: `workflow has no step "${stepId}"` };
}
