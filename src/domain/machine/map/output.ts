import type { TransitionContext } from "../context";

/**
 * The most a map's output may hold: it is stored in its step's row (one SQLite value is at most 2 MB) and read by
 * every later template. Larger outputs stay in the items' rows, read a page at a time (docs/capacity.md).
 */
export const MAX_MAP_OUTPUT_BYTES = 1024 * 1024;

/** The items' outputs in item order, or, past the limit, where to read them instead. */
export function mapOutput(ctx: TransitionContext, mapId: string, total: number): unknown {
  const outputs = ctx.items.outputs(mapId, total);
  const bytes = new TextEncoder().encode(JSON.stringify(outputs)).byteLength;
  if (bytes <= MAX_MAP_OUTPUT_BYTES) return outputs;
  return { items: total, outputBytes: bytes, outputsAt: `/v1/workflows/${ctx.state.id}/steps/${mapId}/items` };
}
