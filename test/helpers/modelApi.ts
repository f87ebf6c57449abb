/**
 * A stand-in for the Anthropic Messages API on 127.0.0.1, so that the real Claude Code (the Agent SDK's
 * bundled binary) runs with only the model faked: point ANTHROPIC_BASE_URL at it. Each request of the
 * agent's loop (one that offers tools) gets the next scripted turn, a tool call or a closing text,
 * streamed as server-sent events the way the API streams them; any other request (a title, a quota
 * check) gets "ok". Every request body is kept, so a test reads what the agent saw: a tool call's
 * result is in the next request.
 */
import { events, json, serveStandIn, turnFor, type Script } from './standIn.js';

export type Turn = { tool: string; input: Record<string, unknown> } | { text: string };

export interface ModelRequest {
  tools?: Array<{ name: string }>;
  messages: Array<{ role: string; content: string | Array<Record<string, unknown>> }>;
  stream?: boolean;
  model?: string;
}

export interface ModelApi {
  url: string;
  /** The agent loop's requests, in order. */
  requests: ModelRequest[];
  /** The text of the tool result the agent sent back for the `n`th tool call (1-based), without Claude Code's reminders. */
  toolResult(n: number): string;
  close(): Promise<void>;
}

function stream(turn: Turn, id: string, model: string): string {
  const usage = { input_tokens: 12, output_tokens: 7 };
  const block = 'tool' in turn ? { type: 'tool_use', id: `toolu_${id}`, name: turn.tool, input: {} } : { type: 'text', text: '' };
  const delta = 'tool' in turn ? { type: 'input_json_delta', partial_json: JSON.stringify(turn.input) } : { type: 'text_delta', text: turn.text };
  const stop = 'tool' in turn ? 'tool_use' : 'end_turn';
  const sse = (type: string, data: object) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
  return [
    sse('message_start', { message: { id: `msg_${id}`, type: 'message', role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null, usage } }),
    sse('content_block_start', { index: 0, content_block: block }),
    sse('content_block_delta', { index: 0, delta }),
    sse('content_block_stop', { index: 0 }),
    sse('message_delta', { delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: usage.output_tokens } }),
    sse('message_stop', {}),
  ].join('');
}

function reply(turn: Turn, id: string, model: string): object {
  const content = 'tool' in turn ? [{ type: 'tool_use', id: `toolu_${id}`, name: turn.tool, input: turn.input }] : [{ type: 'text', text: turn.text }];
  return { id: `msg_${id}`, type: 'message', role: 'assistant', model, content, stop_reason: 'tool' in turn ? 'tool_use' : 'end_turn', stop_sequence: null, usage: { input_tokens: 12, output_tokens: 7 } };
}

/**
 * Serves the agent's loop: `turns` in order (past the last one it repeats it), or whatever `turns` answers
 * to each request (a model that reads the prompt).
 */
export async function startModelApi(turns: Script<ModelRequest, Turn>, host?: string): Promise<ModelApi> {
  const requests: ModelRequest[] = [];
  const server = await serveStandIn(({ url, body }) => {
    const request = (body ? JSON.parse(body) : {}) as ModelRequest;
    if (!url.startsWith('/v1/messages') || url.includes('count_tokens')) return json({ input_tokens: 12 });
    const loop = Boolean(request.tools?.length);
    if (loop) requests.push(request);
    const turn: Turn = loop ? turnFor(turns, request, requests.length) : { text: 'ok' };
    const id = String(requests.length);
    return request.stream ? events(stream(turn, id, request.model ?? 'model')) : json(reply(turn, id, request.model ?? 'model'));
  }, host);
  return {
    ...server,
    requests,
    toolResult(n) {
      for (const r of requests) {
        for (const m of r.messages) {
          if (typeof m.content === 'string') continue;
          const result = m.content.find((b) => b.type === 'tool_result' && b.tool_use_id === `toolu_${n}`);
          if (!result) continue;
          const c = result.content as string | Array<{ type: string; text?: string }>;
          // Claude Code appends its own reminders to what the tool returned.
          return (typeof c === 'string' ? c : c.map((b) => b.text ?? '').join('')).replace(/\s*<system-reminder>[\s\S]*?<\/system-reminder>\s*/g, '');
        }
      }
      throw new Error(`the agent sent no result for tool call ${n} (${requests.length} requests)`);
    },
  };
}
