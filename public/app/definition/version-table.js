// A definition's versions, newest first: each one's number (a link that shows it), hash and publish time. The one
// shown below is marked, and the newest says so.
import { html } from "../html.js";
import { Published } from "./published.js";
import { TableScroll } from "../list/table-scroll.js";

export function VersionTable({ versions, selected, latest, linkTo, now }) {
  return html`
    <${TableScroll} label="Versions">
      <table class="version-list stack-narrow" data-testid="version-list">
        <thead><tr><th>Version</th><th>Hash</th><th>Published</th></tr></thead>
        <tbody>
          ${versions.map(
            (version) => html`<tr key=${version.version} data-version=${version.version} class=${version.version === selected ? "selected" : ""}>
              <td data-label="Version">
                <a href=${linkTo(version.version)} aria-current=${version.version === selected ? "true" : undefined}>v${version.version}</a>
                ${version.version === latest && html`<span class="tag">latest</span>`}
              </td>
              <td data-label="Hash" class="mono" title=${version.hash}>${version.hash.slice(0, 12)}</td>
              <td data-label="Published"><${Published} at=${version.createdAt} now=${now} /></td>
            </tr>`,
          )}
        </tbody>
      </table>
    <//>
  `;
}
