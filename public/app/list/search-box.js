// Search by a workflow's exact id or its definition's exact name: what GET /v1/workflows and
// GET /v1/workflows/{id} can answer (the API has no prefix or substring search).
import { useEffect, useState } from "preact/hooks";
import { html } from "../html.js";

export function SearchBox({ q, onSearch }) {
  const [text, setText] = useState(q ?? "");
  // Back/forward or a definition link changes the search from outside the field.
  useEffect(() => setText(q ?? ""), [q]);
  const submit = (event) => {
    event.preventDefault();
    onSearch(text.trim() || undefined);
  };
  return html`
    <form class="search" role="search" onSubmit=${submit}>
      <input
        type="search"
        name="q"
        aria-label="Search by workflow id or definition name"
        placeholder="Exact workflow id or definition name"
        value=${text}
        onInput=${(event) => setText(event.currentTarget.value)}
      />
      <button type="submit">Search</button>
      ${q && html`<button type="button" class="plain" onClick=${() => onSearch(undefined)}>Clear</button>`}
    </form>
  `;
}
