import type { FastifyRequest } from 'fastify';

/** Where a request came from, for the events of decisions and changes that run code: the peer address and the client's own word. */
export function requestOrigin(req: FastifyRequest): { address: string; client: string; userAgent: string | null } {
  const declared = req.headers['x-maestro-client'];
  const client = typeof declared === 'string' && declared ? declared.slice(0, 100) : req.headers.origin ? 'browser' : 'http';
  const ua = req.headers['user-agent'];
  return { address: req.ip, client, userAgent: typeof ua === 'string' ? ua.slice(0, 200) : null };
}
