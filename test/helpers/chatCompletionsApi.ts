/**
 * A stand-in for an OpenAI-compatible Chat Completions API on 127.0.0.1, so that the real OpenCode (the
 * `opencode-ai` package) runs with only the model faked: `opencodeHome` writes a user config whose
 * provider (`standin`, through the AI SDK's openai-compatible client that OpenCode bundles) points here.
 * Each streamed request of the agent's loop (one that offers tools) gets the next scripted turn, a shell
 * command (OpenCode's `bash` tool) or a closing text, as server-sent chunks; any other request (a
 * session title) gets a short text. Every loop request body is kept, so a test reads what the agent saw.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ShellTurn } from './responsesApi.js';
import { events, json, serveStandIn, turnFor, type Script, type ShellStandIn } from './standIn.js';

export interface ChatRequest {
  model?: string;
  stream?: boolean;
  tools?: Array<{ function?: { name?: string } }>;
  messages: Array<{ role: string; content?: unknown; tool_call_id?: string }>;
}

export type ChatApi = ShellStandIn<ChatRequest>;

/** The model name a run asks for: provider `standin`, model `model`. */
export const STANDIN_MODEL = 'standin/model';

/** The user's side of a request's conversation (tool results are the tool's turns): Maestro's prompt and the commands' output. */
export const userSide = (r: ChatRequest): string => JSON.stringify(r.messages.filter((m) => m.role === 'user' || m.role === 'tool'));

function chunks(turn: ShellTurn, n: number, model: string): string {
  const delta = 'shell' in turn
    ? { role: 'assistant', tool_calls: [{ index: 0, id: `call_${n}`, type: 'function', function: { name: 'bash', arguments: JSON.stringify({ command: turn.shell, description: 'run a command' }) } }] }
    : { role: 'assistant', content: turn.text };
  const base = { id: `chatcmpl_${n}`, object: 'chat.completion.chunk', created: 1, model };
  const data = (o: object) => `data: ${JSON.stringify({ ...base, ...o })}\n\n`;
  return [
    data({ choices: [{ index: 0, delta, finish_reason: null }] }),
    data({ choices: [{ index: 0, delta: {}, finish_reason: 'shell' in turn ? 'tool_calls' : 'stop' }], usage: { prompt_tokens: 12, completion_tokens: 7, total_tokens: 19 } }),
    'data: [DONE]\n\n',
  ].join('');
}

/** Serves the agent's loop (requests that offer tools) its turns; any other request (a session title) gets a title. */
export async function startChatApi(turns: Script<ChatRequest, ShellTurn>, host?: string): Promise<ChatApi> {
  const requests: ChatRequest[] = [];
  const server = await serveStandIn(({ method, url, body }) => {
    if (method !== 'POST' || !url.startsWith('/v1/chat/completions')) return json({ error: { message: `no ${method} ${url} here` } }, 404);
    const request = JSON.parse(body) as ChatRequest;
    const loop = Boolean(request.tools?.length);
    if (loop) requests.push(request);
    return events(chunks(loop ? turnFor(turns, request, requests.length) : { text: 'A title' }, requests.length, request.model ?? 'model'));
  }, host);
  return {
    ...server,
    requests,
    toolOutput(n) {
      for (const r of requests) {
        const out = r.messages.find((m) => m.role === 'tool' && m.tool_call_id === `call_${n}`);
        if (out) return typeof out.content === 'string' ? out.content : JSON.stringify(out.content);
      }
      throw new Error(`the agent sent no output for shell command ${n} (${requests.length} requests)`);
    },
    said: userSide,
  };
}

/** A user's OpenCode config whose provider `standin` is the stand-in (STANDIN_MODEL names its model). */
export function opencodeHome(home: string, api: ChatApi): void {
  const dir = join(home, '.config', 'opencode');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'opencode.json'), JSON.stringify({
    $schema: 'https://opencode.ai/config.json',
    provider: { standin: { npm: '@ai-sdk/openai-compatible', name: 'stand-in', options: { baseURL: `${api.url}/v1`, apiKey: 'test-key' }, models: { model: { name: 'model' } } } },
  }));
}
