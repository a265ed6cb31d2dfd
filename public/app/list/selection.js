// Which workflows of the list are selected for a bulk action: some rows of the page, or every workflow the list's
// filter matches (on every page). Kept in the page's memory only, and cleared when the filter or the page changes:
// a selection made on one view of the list must not act on rows the operator no longer sees.
import { useEffect, useState } from "preact/hooks";

const NONE = { ids: new Set(), allMatching: false };

/** `key` names the view (the list's URL search): a new view starts with nothing selected. */
export function useSelection(key) {
  const [state, setState] = useState(NONE);
  useEffect(() => setState(NONE), [key]);
  const withIds = (change) => setState((previous) => {
    const ids = new Set(previous.ids);
    change(ids);
    return { ids, allMatching: false };
  });
  return {
    ids: [...state.ids],
    allMatching: state.allMatching,
    size: state.ids.size,
    has: (id) => state.allMatching || state.ids.has(id),
    toggle: (id) => withIds((ids) => (ids.has(id) ? ids.delete(id) : ids.add(id))),
    setPage: (pageIds, checked) => withIds((ids) => pageIds.forEach((id) => (checked ? ids.add(id) : ids.delete(id)))),
    selectAllMatching: () => setState({ ids: new Set(), allMatching: true }),
    clear: () => setState(NONE),
  };
}
