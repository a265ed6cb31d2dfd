// Keeping a page current: load now, then again every few seconds while `active` says there is something
// that may change (a running workflow) and the tab is visible. A client asking its server is fine; the
// "no polling" rule is the supervisor's.
import { useCallback, useEffect, useRef, useState } from "preact/hooks";

export const REFRESH_MS = 2_000;

/**
 * `load` returns a promise of the data; `active(data)` says whether to keep refreshing. Returns
 * `{ data, error, loading, reload }`.
 */
export function useLive(load, deps, { active = () => false, everyMs = REFRESH_MS } = {}) {
  const [state, setState] = useState({ data: undefined, error: undefined, loading: true });
  const generation = useRef(0);
  const reload = useCallback(async () => {
    const mine = ++generation.current;
    try {
      const data = await load();
      if (mine === generation.current) setState({ data, error: undefined, loading: false });
      return data;
    } catch (error) {
      if (mine === generation.current) setState((previous) => ({ ...previous, error, loading: false }));
      return undefined;
    }
  }, deps);
  useEffect(() => {
    let timer;
    let stopped = false;
    const tick = async () => {
      const data = await reload();
      if (stopped) return;
      if (active(data)) timer = setTimeout(tick, everyMs);
    };
    setState((previous) => ({ ...previous, loading: true }));
    tick();
    return () => {
      stopped = true;
      clearTimeout(timer);
      generation.current++;
    };
  }, [reload]);
  return { ...state, reload };
}
