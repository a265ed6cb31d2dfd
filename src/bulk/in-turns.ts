/** Runs `each` over `items` with at most `concurrency` of them in flight, in order; resolves when all have ended. */
export async function inTurns<T>(items: readonly T[], concurrency: number, each: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < items.length) await each(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, lane));
}
