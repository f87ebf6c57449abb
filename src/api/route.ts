/**
 * One way to declare a route: zod schemas for params, query and body, checked
 * before the handler runs (a failure is BAD_INPUT naming the field), and the
 * response schema the route answers with (src/api/wire/responses.ts), typed
 * against the handler's return value. All of them are rendered into the
 * OpenAPI document at /api/openapi.json.
 *
 * The response schema describes; it does not serialize. Fastify's zod type
 * provider (fastify-type-provider-zod) would parse every answer through it,
 * which drops and reorders keys (the JSON would no longer be the store's own)
 * and costs a parse of every row of a 5,000-task list; the types come from
 * `z.input` here, and test/api/responses.test.ts parses real answers instead.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import { z } from 'zod';
import { parseInput } from '../core/schemas.js';

type Method = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';

export interface RouteSpec<P extends z.ZodType, Q extends z.ZodType, B extends z.ZodType, R extends z.ZodType = z.ZodType> {
  method: Method;
  url: string;
  summary: string;
  tags?: string[];
  params?: P;
  query?: Q;
  body?: B;
  /** The JSON body of a success; the handler must return what it describes (or send the reply itself). */
  response?: R;
  /** Other media types a success may carry (an SSE stream, JSON lines), each with the schema of one item. */
  content?: Record<string, z.ZodType>;
  /** HTTP status of a success; 200 by default. */
  status?: number;
}

export interface RouteInput<P, Q, B> {
  params: P;
  query: Q;
  body: B;
  req: FastifyRequest;
  reply: FastifyReply;
}

/** A route the app serves, as the OpenAPI document names it: `GET /api/tasks/{id}`. */
const routeKey = (method: string, url: string) => `${method.toUpperCase()} ${url.replace(/:(\w+)/g, '{$1}')}`;

export class OpenApiDoc {
  readonly paths: Record<string, Record<string, unknown>> = {};
  /** Every route the app registered (filled by `track`), documented or not. */
  readonly served = new Set<string>();

  /** Records each route the app registers from now on, so a test can find one the document misses. */
  track(app: FastifyInstance): void {
    app.addHook('onRoute', (route: RouteOptions) => {
      for (const m of [route.method].flat()) if (m !== 'HEAD') this.served.add(routeKey(m, route.url));
    });
  }

  add(spec: RouteSpec<z.ZodType, z.ZodType, z.ZodType>): void {
    const path = spec.url.replace(/:(\w+)/g, '{$1}');
    const content: Record<string, unknown> = {};
    if (spec.response) content['application/json'] = { schema: jsonSchema(spec.response, 'output') };
    for (const [type, item] of Object.entries(spec.content ?? {})) content[type] = { schema: jsonSchema(item, 'output') };
    const ok = Object.keys(content).length ? { description: 'OK', content } : { description: 'OK' };
    const op: Record<string, unknown> = { summary: spec.summary, tags: spec.tags ?? [], responses: { [String(spec.status ?? 200)]: ok, '4XX': { description: 'Error: { error: { code, message, details? } }' } } };
    const parameters: unknown[] = [];
    if (spec.params) for (const [name, schema] of Object.entries(jsonSchema(spec.params).properties ?? {})) parameters.push({ name, in: 'path', required: true, schema });
    if (spec.query) {
      const q = jsonSchema(spec.query);
      for (const [name, schema] of Object.entries(q.properties ?? {})) parameters.push({ name, in: 'query', required: (q.required ?? []).includes(name), schema });
    }
    if (parameters.length) op.parameters = parameters;
    if (spec.body) op.requestBody = { required: true, content: { 'application/json': { schema: jsonSchema(spec.body) } } };
    (this.paths[path] ??= {})[spec.method.toLowerCase()] = op;
  }

  document(): Record<string, unknown> {
    return { openapi: '3.1.0', info: { title: 'Maestro API', version: '0.1.0' }, paths: this.paths };
  }
}

function jsonSchema(schema: z.ZodType, io: 'input' | 'output' = 'input'): { properties?: Record<string, unknown>; required?: string[] } {
  return z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as { properties?: Record<string, unknown>; required?: string[] };
}

/** What a handler may return: the response's shape, or the reply it sent itself (a stream, another media type). */
type Answer<R extends z.ZodType> = z.input<R> | FastifyReply | void;

export function defineRoute<P extends z.ZodType = z.ZodUnknown, Q extends z.ZodType = z.ZodUnknown, B extends z.ZodType = z.ZodUnknown, R extends z.ZodType = z.ZodUnknown>(
  app: FastifyInstance,
  doc: OpenApiDoc,
  spec: RouteSpec<P, Q, B, R>,
  handler: (input: RouteInput<z.output<P>, z.output<Q>, z.output<B>>) => Promise<Answer<R>>,
): void {
  doc.add(spec as RouteSpec<z.ZodType, z.ZodType, z.ZodType>);
  app.route({
    method: spec.method,
    url: spec.url,
    handler: async (req, reply) => {
      const params = spec.params ? parseInput(spec.params, req.params, 'path parameters') : (req.params as z.output<P>);
      const query = spec.query ? parseInput(spec.query, req.query ?? {}, 'query') : (req.query as z.output<Q>);
      // No body counts as `{}` (a bodyless POST); a JSON `null` is a body, and not an object.
      const body = spec.body ? parseInput(spec.body, req.body === undefined ? {} : req.body, 'body') : (undefined as z.output<B>);
      const result = await handler({ params, query, body, req, reply });
      if (reply.sent) return reply;
      if (spec.status) reply.code(spec.status);
      return result;
    },
  });
}
