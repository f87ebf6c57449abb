/**
 * One way to declare a route: zod schemas for params, query and body, checked
 * before the handler runs (a failure is BAD_INPUT naming the field), and the
 * same schemas rendered into the OpenAPI document at /api/openapi.json.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { parseInput } from '../core/schemas.js';

type Method = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';

export interface RouteSpec<P extends z.ZodType, Q extends z.ZodType, B extends z.ZodType> {
  method: Method;
  url: string;
  summary: string;
  tags?: string[];
  params?: P;
  query?: Q;
  body?: B;
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

export class OpenApiDoc {
  readonly paths: Record<string, Record<string, unknown>> = {};

  add(spec: RouteSpec<z.ZodType, z.ZodType, z.ZodType>): void {
    const path = spec.url.replace(/:(\w+)/g, '{$1}');
    const op: Record<string, unknown> = { summary: spec.summary, tags: spec.tags ?? [], responses: { [String(spec.status ?? 200)]: { description: 'OK' }, '4XX': { description: 'Error: { error: { code, message, details? } }' } } };
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

function jsonSchema(schema: z.ZodType): { properties?: Record<string, unknown>; required?: string[] } {
  return z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as { properties?: Record<string, unknown>; required?: string[] };
}

export function defineRoute<P extends z.ZodType = z.ZodUnknown, Q extends z.ZodType = z.ZodUnknown, B extends z.ZodType = z.ZodUnknown>(
  app: FastifyInstance,
  doc: OpenApiDoc,
  spec: RouteSpec<P, Q, B>,
  handler: (input: RouteInput<z.output<P>, z.output<Q>, z.output<B>>) => Promise<unknown>,
): void {
  doc.add(spec as RouteSpec<z.ZodType, z.ZodType, z.ZodType>);
  app.route({
    method: spec.method,
    url: spec.url,
    handler: async (req, reply) => {
      const params = spec.params ? parseInput(spec.params, req.params, 'path parameters') : (req.params as z.output<P>);
      const query = spec.query ? parseInput(spec.query, req.query ?? {}, 'query') : (req.query as z.output<Q>);
      const body = spec.body ? parseInput(spec.body, req.body ?? {}, 'body') : (undefined as z.output<B>);
      const result = await handler({ params, query, body, req, reply });
      if (reply.sent) return reply;
      if (spec.status) reply.code(spec.status);
      return result;
    },
  });
}
