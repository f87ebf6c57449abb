/** This machine's loopback, by the names a URL or a bind address gives it. */
const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1', '[::1]']);

/** A loopback name or address (the daemon's default bind, and the hosts a client may send the home token to). */
export function isLoopback(host: string): boolean {
  return LOOPBACK.has(host.toLowerCase());
}
