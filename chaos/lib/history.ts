// Reading a workflow's history (`GET /v1/workflows/{id}/history`, as lib/finals.ts keeps it).
import type { HistoryEvent } from "./api-shapes.ts";

/** The events of one type for one step, in history order. */
export const ofStep = (events: readonly HistoryEvent[], type: string, stepId: string): HistoryEvent[] => events.filter((e) => e.type === type && e.stepId === stepId);
