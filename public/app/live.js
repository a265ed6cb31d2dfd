// Keeping a page current: load now, then again every few seconds while `active` says there is something
// that may change (a running workflow) and the tab is visible. A client asking its server is fine; the
// "no polling" rule is the supervisor's.
import { useCallback, useEffect, useRef, useState } from "preact/hooks";

export const REFRESH_MS = 2_000;
/** The longest wait between tries while refreshing fails. */
const MAX_RETRY_MS = 30_000;

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
  const restart = useRef(undefined);
  useEffect(() => {
    let timer;
    let stopped = false;
    let ticks = 0;
    let lastGood;
    let failures = 0;
    const tick = async () => {
      const mine = ++ticks;
      clearTimeout(timer);
      const data = await reload();
      // Only the latest tick schedules the next, so a reload during a tick never leaves two loops running.
      if (stopped || mine !== ticks) return data;
      if (data !== undefined) {
        lastGood = data;
        failures = 0;
        if (active(data)) timer = setTimeout(tick, everyMs);
      } else if (lastGood === undefined || active(lastGood)) {
        // A failed refresh (the service restarting, the network gone) is tried again, less often each time.
        failures += 1;
        timer = setTimeout(tick, Math.min(everyMs * 2 ** failures, MAX_RETRY_MS));
      }
      return data;
    };
    restart.current = tick;
    setState((previous) => ({ ...previous, loading: true }));
    tick();
    return () => {
      stopped = true;
      clearTimeout(timer);
      restart.current = undefined;
      generation.current++;
    };
  }, [reload]);
  // An action can make ended data live again (a redrive reopens a workflow): reloading restarts the refreshes too.
  const reloadAndFollow = useCallback(() => (restart.current ?? reload)(), [reload]);
  return { ...state, reload: reloadAndFollow };
}
