import type { Command } from "../command";
import { BULK_COMMANDS } from "./bulk";
import { OPERATOR_COMMANDS } from "./operator";
import { REGISTRY_COMMANDS } from "./registry";
import { result } from "./result";
import { pools, SERVICE_COMMANDS } from "./service";
import { watch } from "./watch";
import { WEBHOOK_COMMANDS } from "./webhooks";
import { worker } from "./worker";
import { WORKFLOW_COMMANDS } from "./workflows";

/** Every command, grouped as `shepherd --help` lists them. */
export const COMMAND_GROUPS: { title: string; commands: Command[] }[] = [
  { title: "Workflows", commands: [...WORKFLOW_COMMANDS, watch, result] },
  { title: "Operator actions", commands: OPERATOR_COMMANDS },
  { title: "Bulk operations", commands: BULK_COMMANDS },
  { title: "Definitions and schedules", commands: REGISTRY_COMMANDS },
  { title: "Webhooks", commands: WEBHOOK_COMMANDS },
  { title: "The service: figures, target breakers, lost starts", commands: SERVICE_COMMANDS },
  { title: "Worker pools", commands: [pools, worker] },
];

/** `help` is a name the parser knows; it runs nothing itself. */
const help: Command = { name: "help", summary: "show help, for every command or the one named", args: ["<command>?"], run: async () => {} };

export const COMMANDS: Command[] = [...COMMAND_GROUPS.flatMap((group) => group.commands), help];
