/**
 * The API's one error handler: a MaestroError answers its own status and
 * stable code; Fastify's own client errors (bad JSON, body too large, a bad
 * percent-encoding, an over-long path parameter) answer their 4xx as
 * BAD_INPUT, a body that is not JSON as UNSUPPORTED_MEDIA_TYPE; anything else
 * is logged and answers a generic 500 that leaks nothing. Errors Node's HTTP
 * parser finds before Fastify sees a request (an unknown method, headers or
 * URL too large) are written on the socket in the same shape.
 */
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest, FastifyServerOptions } from 'fastify';
import { MaestroError, coerceError, errorBody } from '../core/errors.js';
import { conditionOf } from '../daemon/health.js';

function clientErrorBody(err: FastifyError, status: number): { code: string; message: string } {
  switch (err.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return { code: 'UNSUPPORTED_MEDIA_TYPE', message: 'The API takes JSON bodies only ("Content-Type: application/json").' };
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return { code: 'BAD_INPUT', message: 'The request body is larger than the API accepts (2 MB).' };
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return { code: 'BAD_INPUT', message: 'The Content-Length header does not match the body.' };
    default:
      return { code: 'BAD_INPUT', message: status === 400 && err instanceof SyntaxError ? `The body is not valid JSON: ${err.message}` : err.message };
  }
}

export function installErrorHandler(app: FastifyInstance, log: (err: Error) => void): void {
  app.setErrorHandler((raw: FastifyError | Error, _req, reply) => {
    const err = coerceError(raw) as FastifyError;
    if (err instanceof MaestroError) {
      return reply.code(err.status).send({ error: errorBody(err) });
    }
    const fsCondition = fileSystemCondition(err);
    if (fsCondition) {
      log(err); // the health monitor hears of the disk too
      return reply.code(fsCondition.status).send({ error: errorBody(fsCondition) });
    }
    const status = typeof err.statusCode === 'number' ? err.statusCode : 500;
    if (status >= 400 && status < 500) {
      return reply.code(status).send({ error: clientErrorBody(err, status) });
    }
    log(err);
    return reply.code(500).send({ error: errorBody(err) });
  });
  app.setNotFoundHandler((req, reply) => {
    reply.code(404).send({ error: { code: 'NOT_FOUND', message: `No route ${req.method} ${req.url.split('?')[0]}.` } });
  });
}

/** A file write that failed for its disk (full, over quota, read-only) as the condition it is, not an INTERNAL error. */
function fileSystemCondition(err: NodeJS.ErrnoException): MaestroError | null {
  // Which errno is which condition is the health monitor's (conditionOf); SQLite's own are MaestroErrors already.
  const condition = conditionOf(err);
  const where = err.path ? ` holding ${err.path}` : '';
  if (condition === 'DISK_FULL') {
    return new MaestroError('DISK_FULL', `No space left on the disk${where}: free some space and try again.`, { cause: err, details: err.path ? { path: err.path } : undefined });
  }
  if (condition === 'HOME_READ_ONLY') {
    return new MaestroError('HOME_READ_ONLY', `The file system${where} is read-only: remount it read-write and try again.`, { cause: err, details: err.path ? { path: err.path } : undefined });
  }
  return null;
}

/**
 * Errors Fastify raises while routing, before any hook: a bad percent-encoding (400). A path parameter is never too
 * long for the router (server.ts lets it be as long as Node takes a request line); each route's schema says its limit.
 */
export const frameworkErrors: NonNullable<FastifyServerOptions['frameworkErrors']> = (err: FastifyError, req: FastifyRequest, reply: FastifyReply) => {
  const path = req.raw.url?.split('?')[0]?.slice(0, 200) ?? '';
  const message = err.code === 'FST_ERR_BAD_URL' ? `The path "${path}" is not a valid URL: a "%" must start an escape like %2F.` : err.message;
  void reply.code(err.statusCode ?? 400).send({ error: { code: 'BAD_INPUT', message } });
};

/** Node's HTTP parser refused the request (unknown method, malformed request line, headers too large): answer in our shape, then close. */
export function clientErrorHandler(err: NodeJS.ErrnoException & { code?: string }, socket: Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const status = err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : err.code === 'HPE_HEADER_OVERFLOW' ? 431 : 400;
  const message =
    status === 408
      ? 'The request took too long to arrive.'
      : status === 431
        ? 'The request line or headers are too large (the URL included); send less.'
        : err.code === 'HPE_INVALID_METHOD'
          ? 'Unknown HTTP method; the API takes GET, POST and PATCH.'
          : `The request is not valid HTTP (${err.code ?? 'parse error'}).`;
  const body = JSON.stringify({ error: { code: 'BAD_INPUT', message } });
  if (socket.writable) socket.write(`HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
  socket.destroy(err);
}
