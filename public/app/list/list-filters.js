// The workflows list's own filters beside status and search: workflows whose id starts with some text (GET
// /v1/workflows?idPrefix=), and those created in a time range (createdAfter, createdBefore), typed in local time
// or picked as the last hour, day or week. Applying one goes back to the first page, like any change of filter.
import { useEffect, useState } from "preact/hooks";
import { html } from "../html.js";

/** The quick ranges: created within this long before now. */
const RECENT = [
  { label: "Last hour", ms: 3_600_000 },
  { label: "Last 24 h", ms: 86_400_000 },
  { label: "Last 7 days", ms: 7 * 86_400_000 },
];

/** `2026-05-01T14:03:07` in local time, as a datetime-local input shows an ISO instant; "" for none. */
function localInput(iso) {
  if (iso === undefined) return "";
  const date = new Date(iso);
  const pad = (n) => String(n).padStart(2, "0");
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`;
}

/** The instant a datetime-local value names, read in local time, as ISO 8601; undefined for an empty field. */
function instantOf(local) {
  const ms = local ? new Date(local).getTime() : NaN;
  return Number.isFinite(ms) ? new Date(ms).toISOString() : undefined;
}

/** `query`: the list's (list/workflow-query.js); `onApply(changes)` navigates to the list with them. */
export function ListFilters({ query, onApply }) {
  const [prefix, setPrefix] = useState(query.idPrefix ?? "");
  const [from, setFrom] = useState(localInput(query.createdAfter));
  const [to, setTo] = useState(localInput(query.createdBefore));
  // Back/forward or a link changes the filters from outside the form.
  useEffect(() => {
    setPrefix(query.idPrefix ?? "");
    setFrom(localInput(query.createdAfter));
    setTo(localInput(query.createdBefore));
  }, [query.idPrefix, query.createdAfter, query.createdBefore]);
  const active = query.idPrefix !== undefined || query.createdAfter !== undefined || query.createdBefore !== undefined;
  const submit = (event) => {
    event.preventDefault();
    onApply({ idPrefix: prefix.trim() || undefined, createdAfter: instantOf(from), createdBefore: instantOf(to) });
  };
  const recent = (ms) => onApply({ createdAfter: new Date(Date.now() - ms).toISOString(), createdBefore: undefined });
  return html`
    <form class="list-filters" role="search" aria-label="Filter workflows" onSubmit=${submit}>
      <label class="field">Id starts with
        <input type="search" name="idPrefix" placeholder="order-" value=${prefix} onInput=${(event) => setPrefix(event.currentTarget.value)} />
      </label>
      <label class="field">Created from
        <input type="datetime-local" step="1" name="createdAfter" value=${from} onInput=${(event) => setFrom(event.currentTarget.value)} />
      </label>
      <label class="field">to
        <input type="datetime-local" step="1" name="createdBefore" value=${to} onInput=${(event) => setTo(event.currentTarget.value)} />
      </label>
      <button type="submit">Filter</button>
      ${RECENT.map(({ label, ms }) => html`<button type="button" class="plain" key=${label} onClick=${() => recent(ms)}>${label}</button>`)}
      ${active && html`<button type="button" class="plain" onClick=${() => onApply({ idPrefix: undefined, createdAfter: undefined, createdBefore: undefined })}>Clear filters</button>`}
    </form>
  `;
}
