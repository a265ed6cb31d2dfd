// The API token lives in this tab's session storage only: never in a URL, gone when the tab closes.
const TOKEN_KEY = "shepherd.token";

export function currentToken() {
  return sessionStorage.getItem(TOKEN_KEY);
}

export function signIn(token) {
  sessionStorage.setItem(TOKEN_KEY, token);
}

export function signOut() {
  sessionStorage.removeItem(TOKEN_KEY);
}
