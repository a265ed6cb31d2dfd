// One definition (#/definitions/<name>, or #/definitions/<name>/<version>): its versions, newest first, a page at a
// time, and the version picked (the latest unless the URL names one) as its step graph and its JSON. A published
// version never changes, so nothing here refreshes itself.
import { api, query } from "../api.js";
import { html } from "../html.js";
import { useLive } from "../live.js";
import { href } from "../router.js";
import { Pager, readTrail, trailParam } from "../list/paging.js";
import { VersionTable } from "../definition/version-table.js";
import { VersionView } from "../definition/version-view.js";

const PAGE_SIZE = 20;

export function DefinitionPage({ name, version, search }) {
  const trail = readTrail(search);
  const base = `/v1/definitions/${encodeURIComponent(name)}`;
  const loadVersions = async () => ({ ...(await api(`${base}/versions${query({ limit: PAGE_SIZE, cursor: trail.at(-1) })}`)), loadedAt: Date.now() });
  const versions = useLive(loadVersions, [name, search.toString()]);
  const path = version === undefined ? base : `${base}/versions/${encodeURIComponent(version)}`;
  const shown = useLive(() => api(path), [path]);
  if (versions.error?.status === 404) return html`<${Missing} text=${`No definition "${name}" for this token's tenant.`} />`;
  // The newest version is only known on the first page of versions.
  const latest = trail.length === 0 ? versions.data?.versions[0]?.version : undefined;
  const linkTo = (to) => href("definitions", name, String(to), { after: trailParam(trail) });
  return html`
    <div class="definition-page" data-testid="definition-page">
      <p class="crumbs"><a href=${href("definitions")}>Definitions</a> / ${name}</p>
      <h1><code>${name}</code></h1>
      <p><a href=${href("workflows", { q: name })}>The workflows started from it</a></p>
      <section class="panel">
        <h2>Versions</h2>
        ${versions.error && html`<p class="error" role="alert">${versions.error.message}</p>`}
        ${!versions.data && versions.loading && html`<p class="muted">Loading versions…</p>`}
        ${versions.data &&
        html`<${VersionTable} versions=${versions.data.versions} selected=${shown.data?.version} latest=${latest} linkTo=${linkTo} now=${versions.data.loadedAt} />`}
        <${Pager} trail=${trail} nextCursor=${versions.data?.nextCursor} linkTo=${(next) => href("definitions", name, { after: trailParam(next) })} label="Version pages" />
      </section>
      <${Shown} shown=${shown} name=${name} version=${version} latest=${latest} />
    </div>
  `;
}

function Shown({ shown, name, version, latest }) {
  if (shown.error && shown.error.status === 404) return html`<p class="error" role="alert">No version ${version} of definition "${name}".</p>`;
  if (shown.error) return html`<p class="error" role="alert">${shown.error.message}</p>`;
  // Until the version asked for arrives, the one shown before is not it.
  const current = shown.data && (version === undefined || String(shown.data.version) === version) ? shown.data : undefined;
  if (!current) return html`<p class="muted">Loading ${version === undefined ? "the latest version" : `version ${version}`}…</p>`;
  return html`<${VersionView} published=${current} latest=${latest} now=${Date.now()} />`;
}

function Missing({ text }) {
  return html`
    <p class="error" role="alert">${text}</p>
    <p><a href=${href("definitions")}>Back to the definitions</a></p>
  `;
}
