/**
 * Asking the agent for one JSON answer and reading it: the first ```json
 * fence if there is one, else the text from the first `{` to the last `}`,
 * then validated with zod. Anything else is an AGENT_ANSWER_INVALID error
 * that names what was wrong.
 */
import type { z } from 'zod';
import type { AgentProvider, AgentRole } from '../../agents/types.js';
import { READ_ONLY_TOOLS } from '../../agents/types.js';
import { MaestroError } from '../../core/errors.js';

export interface ObserverAgentOptions {
  provider: AgentProvider;
  model: string;
  cwd: string;
  timeoutMs: number;
}

/** One read-only agent call whose answer must be a JSON object matching `schema`. */
export async function askForJson<T>(
  o: ObserverAgentOptions,
  ask: { role: AgentRole; taskTitle: string; prompt: string; whenAsked: string; what: string },
  schema: z.ZodType<T>,
): Promise<T> {
  const result = await o.provider.run({
    role: ask.role,
    taskTitle: ask.taskTitle,
    prompt: ask.prompt,
    cwd: o.cwd,
    model: o.model,
    allowedTools: READ_ONLY_TOOLS,
    permissionMode: 'plan',
    onToken: () => undefined,
    signal: AbortSignal.timeout(o.timeoutMs),
    askUser: async () => ask.whenAsked,
  });
  return parseAnswer(schema, extractJsonObject(result.text, ask.what), ask.what);
}

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
