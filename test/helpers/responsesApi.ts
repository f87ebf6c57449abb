/**
 * A stand-in for OpenAI's Responses API on 127.0.0.1, so that the real Codex CLI (the `@openai/codex`
 * package) runs with only the model faked. Codex reaches it through a model provider in its own
 * `config.toml` (`codexHome` writes one), as a user with a proxy or a gateway configures it. Each request
 * of the agent's loop gets the next scripted turn, a shell command (Codex's `exec_command` tool) or a
 * closing message, streamed as server-sent events the way the API streams them. Every request body is
 * kept, so a test reads what the agent saw: a command's output is in the next request.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { events, json, serveStandIn, turnFor, type Script, type ShellStandIn } from './standIn.js';

/** A turn of a CLI agent's model: run a shell command in the agent's own tool, or answer and stop. */
export type ShellTurn = { shell: string } | { text: string };

export interface ResponsesRequest {
  model?: string;
  tools?: Array<{ name?: string }>;
  input: Array<{ type?: string; role?: string; call_id?: string; output?: string; content?: unknown }>;
}

export type ResponsesApi = ShellStandIn<ResponsesRequest>;

function stream(turn: ShellTurn, n: number): string {
  const item = 'shell' in turn
    ? { type: 'function_call', id: `fc_${n}`, call_id: `call_${n}`, name: 'exec_command', arguments: JSON.stringify({ cmd: turn.shell }) }
    : { type: 'message', id: `msg_${n}`, role: 'assistant', content: [{ type: 'output_text', text: turn.text, annotations: [] }] };
  const id = `resp_${n}`;
  const sse = (type: string, data: object) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
  return [
    sse('response.created', { response: { id } }),
    sse('response.output_item.added', { output_index: 0, item }),
    sse('response.output_item.done', { output_index: 0, item }),
    sse('response.completed', { response: { id, usage: { input_tokens: 12, input_tokens_details: null, output_tokens: 7, output_tokens_details: null, total_tokens: 19 } } }),
  ].join('');
}

/** The user's side of a request's conversation: Maestro's prompt and the commands' output. */
export const userSide = (r: ResponsesRequest): string => JSON.stringify(r.input.filter((i) => i.role === 'user' || i.type === 'function_call_output'));

/** Serves the agent's loop its turns; any other request gets "ok". */
export async function startResponsesApi(turns: Script<ResponsesRequest, ShellTurn>, host?: string): Promise<ResponsesApi> {
  const requests: ResponsesRequest[] = [];
  const server = await serveStandIn(({ method, url, body }) => {
    if (method !== 'POST' || !url.startsWith('/v1/responses')) return json({ error: { message: `no ${method} ${url} here` } }, 404);
    const request = JSON.parse(body) as ResponsesRequest;
    const loop = Boolean(request.tools?.length);
    if (loop) requests.push(request);
    return events(stream(loop ? turnFor(turns, request, requests.length) : { text: 'ok' }, requests.length));
  }, host);
  return {
    ...server,
    requests,
    toolOutput(n) {
      for (const r of requests) {
        const out = r.input.find((i) => i.type === 'function_call_output' && i.call_id === `call_${n}`);
        if (out) return String(out.output);
      }
      throw new Error(`the agent sent no output for shell command ${n} (${requests.length} requests)`);
    },
    said: userSide,
  };
}

/**
 * A user's `~/.codex` whose model provider is the stand-in. `home` must not be in the system's temporary
 * folder: Codex refuses to set up its own sandbox's helper there, and its commands then fail.
 */
export function codexHome(home: string, api: ResponsesApi): void {
  mkdirSync(join(home, '.codex'), { recursive: true });
  writeFileSync(join(home, '.codex', 'config.toml'), [
    'model_provider = "standin"',
    '[model_providers.standin]',
    'name = "stand-in"',
    `base_url = "${api.url}/v1"`,
    'env_key = "OPENAI_API_KEY"',
    'wire_api = "responses"',
    'request_max_retries = 0',
    'stream_max_retries = 0',
    '',
  ].join('\n'));
}
