// The alarm sampler reads a few of a family's open workflows each round, not all of them: a rotation names the
// next n each time, so over the rounds every open workflow is read.

/** A rotation over lists of ids that change between calls: each call names up to n, starting where the last left off. */
export function rotation(): (ids: readonly string[], n: number) => string[] {
  let cursor = 0;
  return (ids, n) => {
    if (ids.length <= n) return [...ids];
    cursor = (cursor + n) % ids.length;
    return [...ids.slice(cursor), ...ids.slice(0, cursor)].slice(0, n);
  };
}
