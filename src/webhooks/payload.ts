/** What a receiver gets for one history event: its stable id and the JSON body. */
import type { HistoryEvent } from "../workflow/store";
import { eventNameOf } from "./event-names";

/** The `webhook-id` header: the same on every retry of the event, so a receiver can drop repeats. */
export function eventIdOf(workflowId: string, seq: number): string {
  return `${workflowId}:${seq}`;
}

export interface EventBody {
  type: string;
  /** When the event happened (ISO 8601), as `data.at` in epoch milliseconds. */
  timestamp: string;
  data: { workflowId: string; workflowName: string; seq: number; at: number; stepId?: string; attempt?: number; data?: Record<string, unknown> };
}

export function eventBody(workflowId: string, workflowName: string, event: HistoryEvent): EventBody {
  return {
    type: eventNameOf(event.type),
    timestamp: new Date(event.at).toISOString(),
    data: {
      workflowId,
      workflowName,
      seq: event.seq,
      at: event.at,
      ...(event.stepId === undefined ? {} : { stepId: event.stepId }),
      ...(event.attempt === undefined ? {} : { attempt: event.attempt }),
      ...(event.data === undefined ? {} : { data: event.data }),
    },
  };
}
