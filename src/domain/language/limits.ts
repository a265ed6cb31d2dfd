/** Limits of the contract; each is enforced with a clear 4xx, never discovered as a crash. */
export const LIMITS = {
  /** Whole request body. */
  requestBodyBytes: 1024 * 1024,
  /** Workflow input, a step's output, heartbeat progress. */
  payloadBytes: 128 * 1024,
  /** Nesting of any JSON value we keep: deeper values would blow the stack of code that walks them. */
  jsonDepth: 64,
  stepsPerDefinition: 200,
} as const;

/** Why a JSON value breaks the limits, or undefined when it fits. Walks iteratively, so depth cannot hurt it. */
export function jsonLimitProblem(value: unknown, maxBytes: number, maxDepth: number = LIMITS.jsonDepth): string | undefined {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [current, depth] = stack.pop()!;
    if (current === null || typeof current !== "object") continue;
    if (depth >= maxDepth) return `nested deeper than ${maxDepth} levels`;
    for (const child of Object.values(current)) stack.push([child, depth + 1]);
  }
  const bytes = new TextEncoder().encode(JSON.stringify(value) ?? "").byteLength;
  return bytes > maxBytes ? `${bytes} bytes is over the limit of ${maxBytes} bytes` : undefined;
}
