// What a driver keeps of each workflow it starts and follows, the same for every family: run.ts reads it for
// the terminal check and to know which workflows to read at the end.
import type { WorkflowView } from "./api-shapes.ts";
import type { LanguageRecord } from "./language.ts";
import type { StartAccount } from "./starts.ts";

export interface WorkflowResult extends StartAccount {
  id: string;
  kind: string;
  started: boolean;
  terminal: boolean;
  /** The status of the last reading. */
  status: string | null;
  polls: number;
  pollErrors: number;
  observedEndAt: number | null;
  /** A workflow of the language: what was sent and when its wait was seen. */
  language?: LanguageRecord;
  /** A workflow of the language: its last reading, for the restart's timing. */
  lastView?: WorkflowView;
}

export function newResult(id: string, kind: string): WorkflowResult {
  return { id, kind, started: false, startTries: 0, startStatuses: {}, terminal: false, status: null, polls: 0, pollErrors: 0, observedEndAt: null };
}
