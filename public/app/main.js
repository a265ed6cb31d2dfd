// The dashboard's shell: sign-in gate, navigation, and the page the URL's hash names.
import { render } from "preact";
import { useEffect, useState } from "preact/hooks";
import { onUnauthorized } from "./api.js";
import { html } from "./html.js";
import { href, useRoute } from "./router.js";
import { currentToken, signOut } from "./session.js";
import { SignIn } from "./sign-in.js";
import { DeadLettersPage } from "./pages/dead-letters.js";
import { DefinitionsPage } from "./pages/definitions.js";
import { BulkPage } from "./pages/bulk.js";
import { MetricsPage } from "./pages/metrics.js";
import { PoolsPage } from "./pages/pools.js";
import { SchedulesPage } from "./pages/schedules.js";
import { TargetsPage } from "./pages/targets.js";
import { WebhooksPage } from "./pages/webhooks.js";
import { WorkflowPage } from "./pages/workflow.js";
import { WorkflowsPage } from "./pages/workflows.js";

const NAV = [
  ["workflows", "Workflows"],
  ["schedules", "Schedules"],
  ["definitions", "Definitions"],
  ["pools", "Pools"],
  ["webhooks", "Webhooks"],
  ["targets", "Targets"],
  ["dead-letters", "Dead letters"],
  ["bulk", "Bulk jobs"],
  ["metrics", "Metrics"],
];

function Page({ route }) {
  if (route.page === "workflows" && route.params[0]) return html`<${WorkflowPage} id=${route.params[0]} />`;
  if (route.page === "schedules") return html`<${SchedulesPage} route=${route} />`;
  if (route.page === "definitions") return html`<${DefinitionsPage} route=${route} />`;
  if (route.page === "pools") return html`<${PoolsPage} />`;
  if (route.page === "webhooks") return html`<${WebhooksPage} route=${route} />`;
  if (route.page === "targets") return html`<${TargetsPage} route=${route} />`;
  if (route.page === "dead-letters") return html`<${DeadLettersPage} route=${route} />`;
  if (route.page === "bulk") return html`<${BulkPage} route=${route} />`;
  if (route.page === "metrics") return html`<${MetricsPage} route=${route} />`;
  return html`<${WorkflowsPage} route=${route} />`;
}

function App() {
  const [signedIn, setSignedIn] = useState(() => currentToken() !== null);
  const [reason, setReason] = useState(undefined);
  const route = useRoute();
  useEffect(
    () =>
      onUnauthorized(() => {
        setReason("The API no longer accepts this token: sign in again.");
        setSignedIn(false);
      }),
    [],
  );
  if (!signedIn) return html`<${SignIn} reason=${reason} onSignedIn=${() => setSignedIn(true)} />`;
  const leave = () => {
    signOut();
    setReason(undefined);
    setSignedIn(false);
  };
  return html`
    <header class="top">
      <a class="brand" href=${href("workflows")}>Shepherd</a>
      <nav>${NAV.map(([page, label]) => html`<a href=${href(page)} class=${route.page === page ? "current" : ""}>${label}</a>`)}</nav>
      <span class="spacer"></span>
      <a href="/docs" target="_blank" rel="noopener">API reference</a>
      <button type="button" class="link" onClick=${leave}>Sign out</button>
    </header>
    <main class="page"><${Page} route=${route} /></main>
  `;
}

render(html`<${App} />`, document.getElementById("app"));
