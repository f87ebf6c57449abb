/**
 * Reading a model's JSON answer: the first ```json fence if there is one,
 * else the text from the first `{` to the last `}`. Anything else is an
 * AGENT_ANSWER_INVALID error that names what was wrong.
 */
import type { z } from 'zod';
import { MaestroError } from '../../core/errors.js';

export function extractJsonObject(text: string, what: string): unknown {
  const fence = /```(?:json)?\s*\n([\s\S]*?)\n?```/.exec(text);
  const body = fence?.[1]?.trim().startsWith('{') ? fence[1] : text;
  const start = body.indexOf('{');
  const end = body.lastIndexOf('}');
  if (start < 0 || end < start) throw new MaestroError('AGENT_ANSWER_INVALID', `${what}: the answer holds no JSON object`);
  try {
    return JSON.parse(body.slice(start, end + 1));
  } catch (err) {
    throw new MaestroError('AGENT_ANSWER_INVALID', `${what}: the answer's JSON does not parse (${(err as Error).message})`);
  }
}

/** Validates with zod; the error lists the first problems with their paths. */
export function parseAnswer<T>(schema: z.ZodType<T>, value: unknown, what: string): T {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues.slice(0, 3).map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`);
  throw new MaestroError('AGENT_ANSWER_INVALID', `${what}: ${problems.join('; ')}`, { details: { problems } });
}
