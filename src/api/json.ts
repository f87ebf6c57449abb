/**
 * The API's only body parser: application/json, nothing else (Fastify's
 * text/plain parser is removed, so a text/plain or form post is a 415).
 *
 * Parsing keeps Fastify's own protection against `__proto__` and
 * `constructor.prototype` keys. On top of it, a depth limit: a body nested
 * 5,000 deep parses fine but then overflows the stack in the validators and
 * `JSON.stringify` (a 500 before this limit). Our deepest schema is a few
 * levels and a project config a handful more, so 64 leaves ample room. An
 * empty body with the JSON content type is no body (a bodyless POST may
 * carry the content type instead of X-Maestro-Client).
 */
import type { FastifyInstance } from 'fastify';
import { MaestroError } from '../core/errors.js';

export const MAX_JSON_DEPTH = 64;

/** True when `value` nests objects or arrays deeper than `max`; iterative, so it cannot overflow itself. */
export function nestedDeeperThan(value: unknown, max: number): boolean {
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length) {
    const [v, depth] = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (depth > max) return true;
    for (const child of Array.isArray(v) ? v : Object.values(v)) if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
  }
  return false;
}

/** Fastify's "Body is not valid JSON" says nothing of where: JSON.parse's own message does (a position). */
function whereInvalid(err: Error, body: string): Error {
  if ((err as { code?: string }).code !== 'FST_ERR_CTP_INVALID_JSON_BODY') return err; // a __proto__ key, say: its own message
  try {
    JSON.parse(body);
  } catch (syntax) {
    return new MaestroError('BAD_INPUT', `The body is not valid JSON: ${(syntax as Error).message}.`);
  }
  return err;
}

export function installJsonParser(app: FastifyInstance): void {
  const parse = app.getDefaultJsonParser('error', 'error');
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) => {
    if (body === '') return done(null, undefined);
    parse(req, body as string, (err: Error | null, value?: unknown) => {
      if (err) return done(whereInvalid(err, body as string), undefined);
      if (nestedDeeperThan(value, MAX_JSON_DEPTH)) return done(new MaestroError('BAD_INPUT', `The JSON body nests deeper than ${MAX_JSON_DEPTH} levels; no request needs that.`), undefined);
      done(null, value);
    });
  });
}
