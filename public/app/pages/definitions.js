// The tenant's published definitions (GET /v1/definitions): each name once, with its latest version, that version's
// hash and when it was published, in name order. A name opens its own page (#/definitions/<name>), with every version.
import { api, query } from "../api.js";
import { html } from "../html.js";
import { useLive } from "../live.js";
import { href } from "../router.js";
import { Pager, readTrail, trailParam } from "../list/paging.js";
import { Published } from "../definition/published.js";
import { DefinitionPage } from "./definition.js";
import { TableScroll } from "../list/table-scroll.js";

const PAGE_SIZE = 50;

export function DefinitionsPage({ route }) {
  const [name, version] = route.params;
  if (name) return html`<${DefinitionPage} name=${name} version=${version} search=${route.search} />`;
  return html`<${DefinitionList} route=${route} />`;
}

/** Published versions never change and new ones are rare: read once, and again on a reload. */
function DefinitionList({ route }) {
  const trail = readTrail(route.search);
  const load = async () => ({ ...(await api(`/v1/definitions${query({ limit: PAGE_SIZE, cursor: trail.at(-1) })}`)), loadedAt: Date.now() });
  const { data, error, loading } = useLive(load, [route.search.toString()]);
  return html`
    <div class="list-head"><h1>Definitions</h1></div>
    ${error && html`<p class="error" role="alert">${error.message}</p>`}
    ${!data && loading && html`<p class="muted">Loading definitions…</p>`}
    ${data && data.definitions.length === 0 && html`<${NoDefinitions} />`}
    ${data && data.definitions.length > 0 && html`<${DefinitionTable} definitions=${data.definitions} now=${data.loadedAt} />`}
    <${Pager} trail=${trail} nextCursor=${data?.nextCursor} linkTo=${(next) => href("definitions", { after: trailParam(next) })} label="Definition pages" />
  `;
}

function DefinitionTable({ definitions, now }) {
  return html`
    <${TableScroll} label="Definitions">
      <table class="definition-list stack-narrow" data-testid="definition-list">
        <thead><tr><th>Definition</th><th>Latest</th><th>Hash</th><th>Published</th></tr></thead>
        <tbody>
          ${definitions.map(
            (definition) => html`<tr key=${definition.name} data-definition=${definition.name}>
              <td data-label="Definition"><a class="mono" href=${href("definitions", definition.name)}>${definition.name}</a></td>
              <td data-label="Latest" data-testid="definition-latest"><a href=${href("definitions", definition.name, String(definition.version))}>v${definition.version}</a></td>
              <td data-label="Hash" class="mono" title=${definition.hash} data-testid="definition-hash">${definition.hash.slice(0, 12)}</td>
              <td data-label="Published"><${Published} at=${definition.createdAt} now=${now} /></td>
            </tr>`,
          )}
        </tbody>
      </table>
    <//>
  `;
}

function NoDefinitions() {
  return html`<p class="empty" role="status">
    No definitions published yet. Publish one with <code>shepherd definitions put order.yaml</code> (or <code>PUT /v1/definitions/NAME</code>),
    then start it by name; each new content becomes its next version.
  </p>`;
}
