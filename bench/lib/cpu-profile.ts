// The V8 CPU profile (a .cpuprofile, what the inspector's Profiler.stop returns), as the profile's readers
// use it, and the check that a value read from the inspector or a file is one.
import { isRecord } from "../../scripts/lib/json.ts";

/** Where a node's code is: line and column 0-based, as in the protocol. */
export interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
  columnNumber: number;
  scriptId?: string;
}

export interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
  /** Samples that hit this node, in a profile without a sample list. */
  hitCount?: number;
}

/** Times in µs. */
export interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  /** The node of each sample, in order. */
  samples?: number[];
  /** The time since the sample before, per sample. */
  timeDeltas?: number[];
}

const isNode = (node: unknown): node is ProfileNode =>
  isRecord(node) && typeof node.id === "number" && isRecord(node.callFrame) && typeof node.callFrame.url === "string" && typeof node.callFrame.functionName === "string";

/** The value as a CPU profile; throws, naming `what`, when it is not one (no node list, or a node without its frame). */
export function asCpuProfile(value: unknown, what: string): CpuProfile {
  if (!isRecord(value) || !Array.isArray(value.nodes) || !value.nodes.every(isNode)) throw new Error(`${what} is not a CPU profile`);
  if (typeof value.startTime !== "number" || typeof value.endTime !== "number") throw new Error(`${what} is not a CPU profile: no start or end time`);
  const numbers = (list: unknown): boolean => list === undefined || (Array.isArray(list) && list.every((item) => typeof item === "number"));
  if (!numbers(value.samples) || !numbers(value.timeDeltas)) throw new Error(`${what} is not a CPU profile: samples that are not numbers`);
  return value as unknown as CpuProfile;
}
