// Sign in: the operator pastes an API token; it is checked against the API before it is kept.
import { useState } from "preact/hooks";
import { api } from "./api.js";
import { html } from "./html.js";
import { signIn } from "./session.js";

export function SignIn({ onSignedIn, reason }) {
  const [token, setToken] = useState("");
  const [error, setError] = useState(reason);
  const [busy, setBusy] = useState(false);
  const submit = async (event) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      // Any cheap authenticated read tells whether the token is one of API_TOKENS.
      await api("/v1/workflows?limit=1", { token: token.trim() });
      signIn(token.trim());
      onSignedIn();
    } catch (failure) {
      setError(failure.status === 401 ? "That token was not accepted. Use one of the API_TOKENS (tenant:token) tokens." : failure.message);
    } finally {
      setBusy(false);
    }
  };
  return html`
    <main class="sign-in">
      <form onSubmit=${submit}>
        <h1>Shepherd</h1>
        <p>Sign in with an API token. It is kept in this browser tab only, until you sign out or close it.</p>
        <label>API token <input name="token" type="password" autocomplete="off" value=${token} onInput=${(e) => setToken(e.currentTarget.value)} required /></label>
        ${error && html`<p class="error" role="alert">${error}</p>`}
        <button type="submit" class="primary" disabled=${busy}>Sign in</button>
      </form>
    </main>
  `;
}
