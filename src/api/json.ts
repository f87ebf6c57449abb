/**
 * The API's only body parser: application/json, nothing else (Fastify's
 * text/plain parser is removed, so a text/plain or form post is a 415).
 *
 * Parsing keeps Fastify's own protection against `__proto__` and
 * `constructor.prototype` keys (an object merged with one would change the
 * prototype of every object), with a message naming the key where Fastify's
 * calls the body "not valid JSON". On top of it, a depth limit: a body nested
 * 5,000 deep parses fine but then overflows the stack in the validators and
 * `JSON.stringify` (a 500 before this limit). Our deepest schema is a few
 * levels and a project config a handful more, so 64 leaves ample room. An
 * empty body with the JSON content type is no body (a bodyless POST may
 * carry the content type instead of X-Maestro-Client).
 *
 * And no lone UTF-16 surrogate in any string, key or value: JSON's `"\ud800"`
 * parses to one, which UTF-8 cannot hold, so SQLite, PostgreSQL and every file
 * would keep U+FFFD in its place without a word. A body is the only way one
 * comes in (a URL's percent-escapes are UTF-8 bytes), so this one check covers
 * every title, path and text the routes validate.
 */
import type { FastifyInstance } from 'fastify';
import { MaestroError } from '../core/errors.js';
import { LONE_SURROGATE } from '../core/schemas.js';

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


/** A JSON escape of a UTF-16 surrogate (paired or not). */
const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/;

/** Where a value sits in the body, kept as a chain (not an array per value) so a 2 MB array of numbers costs no path copies. */
type Where = { up: Where; key: string | number } | null;
const pathOf = (where: Where): (string | number)[] => (where ? [...pathOf(where.up), where.key] : []);

/** A string of `value` (a key or a value) holding a lone surrogate: its path, and which code unit where; null when there is none. Iterative, as nestedDeeperThan. */
export function loneSurrogateIn(value: unknown): { path: (string | number)[]; at: number; unit: string } | null {
  const found = (where: Where, s: string) => {
    const m = LONE_SURROGATE.exec(s);
    return m ? { path: pathOf(where), at: m.index, unit: `\\u${s.charCodeAt(m.index).toString(16)}` } : null;
  };
  const stack: [unknown, Where][] = [[value, null]];
  while (stack.length) {
    const [v, where] = stack.pop()!;
    if (typeof v === 'string') {
      const hit = found(where, v);
      if (hit) return hit;
    } else if (v !== null && typeof v === 'object') {
      for (const [key, child] of Array.isArray(v) ? v.entries() : Object.entries(v)) {
        const at = { up: where, key };
        const hit = typeof key === 'string' ? found(at, key) : null;
        if (hit) return hit;
        if (typeof child === 'string' || (child !== null && typeof child === 'object')) stack.push([child, at]);
      }
    }
  }
  return null;
}

function loneSurrogateError(hit: { path: (string | number)[]; at: number; unit: string }): MaestroError {
  const message = `holds a lone UTF-16 surrogate (${hit.unit} at character ${hit.at}), which is no character; send valid Unicode text.`;
  // Worded and detailed as parseInput words a schema's refusal: "Invalid body: <field>: <what is wrong>".
  return new MaestroError('BAD_INPUT', `Invalid body: ${hit.path.length ? `${hit.path.join('.')}: ` : ''}${message}`, { details: { issues: [{ path: hit.path, message }] } });
}

/** Where `value` holds a key Fastify refuses (`__proto__`, or `constructor` holding `prototype`): its path, ending in that key; null when none. Iterative, as nestedDeeperThan. */
export function prototypeKeyIn(value: unknown): (string | number)[] | null {
  const stack: [unknown, Where][] = [[value, null]];
  while (stack.length) {
    const [v, where] = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    for (const [key, child] of Array.isArray(v) ? v.entries() : Object.entries(v)) {
      const at = { up: where, key };
      if (key === '__proto__') return pathOf(at);
      if (key === 'constructor' && child !== null && typeof child === 'object' && Object.hasOwn(child, 'prototype')) return [...pathOf(at), 'prototype'];
      if (child !== null && typeof child === 'object') stack.push([child, at]);
    }
  }
  return null;
}

/**
 * Fastify's "Body is not valid JSON" says nothing of where: JSON.parse's own message does (a position). And it says
 * the same of valid JSON holding a `__proto__` key (JSON.parse keeps one as a plain key): that key is named instead.
 */
function whereInvalid(err: Error, body: string): Error {
  if ((err as { code?: string }).code !== 'FST_ERR_CTP_INVALID_JSON_BODY') return err;
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch (syntax) {
    return new MaestroError('BAD_INPUT', `The body is not valid JSON: ${(syntax as Error).message}.`);
  }
  const path = prototypeKeyIn(value);
  if (!path) return err;
  const key = path.at(-1) === '__proto__' ? '__proto__' : 'constructor.prototype';
  const message = `"${key}" is a key the API refuses, though the JSON is valid: merged into an object, it would change the prototype of every object. Rename or remove it.`;
  return new MaestroError('BAD_INPUT', `Invalid body: ${path.join('.')}: ${message}`, { details: { issues: [{ path, message }] } });
}

export function installJsonParser(app: FastifyInstance): void {
  const parse = app.getDefaultJsonParser('error', 'error');
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) => {
    if (body === '') return done(null, undefined);
    parse(req, body as string, (err: Error | null, value?: unknown) => {
      if (err) return done(whereInvalid(err, body as string), undefined);
      if (nestedDeeperThan(value, MAX_JSON_DEPTH)) return done(new MaestroError('BAD_INPUT', `The JSON body nests deeper than ${MAX_JSON_DEPTH} levels; no request needs that.`), undefined);
      // Text decoded from UTF-8 holds no lone surrogate: only a \uD800–\uDFFF escape makes one, so most bodies are not walked.
      const lone = SURROGATE_ESCAPE.test(body as string) ? loneSurrogateIn(value) : null;
      if (lone) return done(loneSurrogateError(lone), undefined);
      done(null, value);
    });
  });
}
