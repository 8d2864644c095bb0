// The page's address loses its access token as soon as the page runs: the master has exchanged the
// token for a session cookie (HttpOnly, so no script reads it), which authenticates reloads, the
// QR code and the WebSocket from here on. The token stays out of the address bar, the history and
// bookmarks. Loaded before app.js, so nothing after it sees the token.
const address = new URL(window.location.href);
if (address.searchParams.has('token')) {
  address.searchParams.delete('token');
  history.replaceState(history.state, '', address.pathname + address.search + address.hash);
}
