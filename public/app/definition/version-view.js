// One published version: its hash, when it was published and how to start it, its steps drawn as the workflow page
// draws a run's (without statuses: nothing ran), and its JSON as it was published, laid out to be read.
import { html } from "../html.js";
import { StepGraph } from "../workflow/graph.js";
import { definitionStructure } from "../workflow/structure.js";
import { Published } from "./published.js";

export function VersionView({ published, latest, now }) {
  const { name, version, hash, createdAt, definition } = published;
  return html`
    <section class="panel version-view" data-testid="version-view" data-version=${version}>
      <h2>Version ${version} ${version === latest && html`<span class="tag">latest</span>`}</h2>
      <dl class="facts">
        <div><dt>Hash</dt><dd class="mono hash" data-testid="version-hash">${hash}</dd></div>
        <div><dt>Published</dt><dd><${Published} at=${createdAt} now=${now} /></dd></div>
        <div><dt>Steps</dt><dd>${definition.steps.length}</dd></div>
        <div><dt>Start it</dt><dd><code>shepherd start --definition ${name} --version ${version}</code></dd></div>
      </dl>
      <h3>Steps</h3>
      <${StepGraph} steps=${definitionStructure(definition)} caption="Each step after the steps it depends on, with its kind." />
      <h3>JSON</h3>
      <pre class="definition-json" data-testid="definition-json" role="region" aria-label=${`Version ${version} as JSON`} tabindex="0">${JSON.stringify(definition, null, 2)}</pre>
    </section>
  `;
}
