/** Whether this process could listen on an address now, asked by listening there and closing again at once. */
import { createServer } from 'node:net';

/**
 * Null when `host:port` can be bound now, else the error listen gave: EADDRINUSE (something listens there),
 * EADDRNOTAVAIL (not an address of this machine), EACCES (a port below 1024). Port 0 asks about the host only.
 */
export function bindError(host: string, port: number): Promise<NodeJS.ErrnoException | null> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', (err: NodeJS.ErrnoException) => resolve(err));
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => resolve(null)));
  });
}
