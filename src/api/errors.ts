/**
 * The API's one error handler: a MaestroError answers its own status and
 * stable code; Fastify's own client errors (bad JSON, wrong content type, body
 * too large) answer 400/413/415 as BAD_INPUT; anything else is logged and
 * answers a generic 500 that leaks nothing.
 */
import type { FastifyError, FastifyInstance } from 'fastify';
import { MaestroError, coerceError } from '../core/errors.js';

export function installErrorHandler(app: FastifyInstance, log: (err: Error) => void): void {
  app.setErrorHandler((raw: FastifyError | Error, _req, reply) => {
    const err = coerceError(raw) as FastifyError;
    if (err instanceof MaestroError) {
      return reply.code(err.status).send({ error: err.toJSON() });
    }
    const status = typeof err.statusCode === 'number' ? err.statusCode : 500;
    if (status >= 400 && status < 500) {
      return reply.code(status).send({ error: { code: 'BAD_INPUT', message: err.message } });
    }
    log(err);
    return reply.code(500).send({ error: { code: 'INTERNAL', message: 'Internal error; the daemon log has the details.' } });
  });
  app.setNotFoundHandler((req, reply) => {
    reply.code(404).send({ error: { code: 'NOT_FOUND', message: `No route ${req.method} ${req.url.split('?')[0]}.` } });
  });
}
