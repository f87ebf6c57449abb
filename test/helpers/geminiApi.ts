/**
 * A stand-in for Google's Gemini API on 127.0.0.1, so that the real Gemini CLI (the `@google/gemini-cli`
 * package) runs with only the model faked: point GOOGLE_GEMINI_BASE_URL at it and choose API-key login
 * (`geminiHome`). Each streamed request of the agent's loop gets the next scripted turn, a shell command
 * (Gemini's `run_shell_command` tool) or a closing text, as server-sent events the way the API streams
 * them; any other request (the CLI's own routing and housekeeping calls) gets a short JSON answer. Every
 * streamed request body is kept, so a test reads what the agent saw: a command's output is in the next one.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { ShellTurn } from './responsesApi.js';

export interface GeminiRequest {
  contents: Array<{ role: string; parts: Array<{ text?: string; functionCall?: unknown; functionResponse?: { name: string; response: unknown } }> }>;
}

export interface GeminiApi {
  url: string;
  /** The agent loop's requests, in order. */
  requests: GeminiRequest[];
  /** What the `n`th shell command (1-based) of the latest request's conversation gave back to the model. */
  toolOutput(n: number): string;
  /** The user's side of a request's conversation: Maestro's prompt and the commands' output. */
  said(request: GeminiRequest): string;
  close(): Promise<void>;
}

const usageMetadata = { promptTokenCount: 12, candidatesTokenCount: 7, totalTokenCount: 19 };

function chunk(parts: object[]): object {
  return { candidates: [{ content: { role: 'model', parts }, finishReason: 'STOP', index: 0 }], usageMetadata, modelVersion: 'gemini-stand-in' };
}

/** The user's side of a request's conversation (function responses are the user's turns): Maestro's prompt and the commands' output. */
export const userSide = (r: GeminiRequest): string => JSON.stringify(r.contents.filter((c) => c.role === 'user'));

/** Serves the agent's loop: `turns` in order (past the last one it repeats it), or whatever `turns` answers to each request. */
export async function startGeminiApi(turns: readonly ShellTurn[] | ((request: GeminiRequest) => ShellTurn)): Promise<GeminiApi> {
  const requests: GeminiRequest[] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      if (req.method !== 'POST' || !req.url?.includes(':streamGenerateContent')) {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(chunk([{ text: '{}' }])));
        return;
      }
      const json = JSON.parse(body) as GeminiRequest;
      requests.push(json);
      const turn = typeof turns === 'function' ? turns(json) : turns[Math.min(requests.length, turns.length) - 1]!;
      const parts = 'shell' in turn ? [{ functionCall: { name: 'run_shell_command', args: { command: turn.shell } } }] : [{ text: turn.text }];
      res.writeHead(200, { 'content-type': 'text/event-stream' }).end(`data: ${JSON.stringify(chunk(parts))}\r\n\r\n`);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    toolOutput(n) {
      // The conversation grows by one call and its response a turn; the nth response is in every later request.
      const responses = requests.at(-1)?.contents.flatMap((c) => c.parts.filter((p) => p.functionResponse)) ?? [];
      const hit = responses[n - 1];
      if (!hit) throw new Error(`the agent sent no output for shell command ${n} (${requests.length} requests)`);
      return JSON.stringify(hit.functionResponse!.response);
    },
    said: userSide,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** A user's `~/.gemini` that logs in with GEMINI_API_KEY (a headless run cannot choose). */
export function geminiHome(home: string): void {
  mkdirSync(join(home, '.gemini'), { recursive: true });
  writeFileSync(join(home, '.gemini', 'settings.json'), JSON.stringify({ security: { auth: { selectedType: 'gemini-api-key' } } }));
}
