/**
 * The daemon's token, as the board keeps it: in its own origin's storage, which no page of another port reads.
 * web/index.html puts it there from the board link (`?token=…`, checked by the daemon before it serves the page)
 * and drops it from the address bar.
 * Not a cookie: a browser sends a host's cookies to every port of it, so another server on 127.0.0.1 the person
 * opened (an agent's dev server) was sent the token. Fetches send it as a header, EventSource and WebSocket in
 * their URL (`?token=`, which the daemon takes on those two routes only).
 */
export const TOKEN_KEY = 'maestro.token';

export function boardToken(): string | null {
  try {
    return localStorage.getItem(TOKEN_KEY);
  } catch {
    return null; // storage off: not signed in, and the board says how to sign in
  }
}

/** The headers that carry the token; none without one (not signed in: the board says how). */
export function tokenHeaders(): Record<string, string> {
  const token = boardToken();
  return token ? { authorization: `Bearer ${token}` } : {};
}

/** A stream's URL with the token. */
export function withToken(url: string): string {
  const token = boardToken();
  return token ? `${url}${url.includes('?') ? '&' : '?'}token=${encodeURIComponent(token)}` : url;
}
