/**
 * A stand-in for Google's Gemini API on 127.0.0.1, so that the real Gemini CLI (the `@google/gemini-cli`
 * package) runs with only the model faked: point GOOGLE_GEMINI_BASE_URL at it and choose API-key login
 * (`geminiHome`). Each streamed request of the agent's loop gets the next scripted turn, a shell command
 * (Gemini's `run_shell_command` tool) or a closing text, as server-sent events the way the API streams
 * them; any other request (the CLI's own routing and housekeeping calls) gets a short JSON answer. Every
 * streamed request body is kept, so a test reads what the agent saw: a command's output is in the next one.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ShellTurn } from './responsesApi.js';
import { events, json, serveStandIn, turnFor, type Script, type ShellStandIn } from './standIn.js';

export interface GeminiRequest {
  contents: Array<{ role: string; parts: Array<{ text?: string; functionCall?: unknown; functionResponse?: { name: string; response: unknown } }> }>;
}

export type GeminiApi = ShellStandIn<GeminiRequest>;

const usageMetadata = { promptTokenCount: 12, candidatesTokenCount: 7, totalTokenCount: 19 };

function chunk(parts: object[]): object {
  return { candidates: [{ content: { role: 'model', parts }, finishReason: 'STOP', index: 0 }], usageMetadata, modelVersion: 'gemini-stand-in' };
}

/** The user's side of a request's conversation (function responses are the user's turns): Maestro's prompt and the commands' output. */
export const userSide = (r: GeminiRequest): string => JSON.stringify(r.contents.filter((c) => c.role === 'user'));

/** Serves the agent's loop (the streamed requests) its turns; any other request gets a short JSON answer. */
export async function startGeminiApi(turns: Script<GeminiRequest, ShellTurn>, host?: string): Promise<GeminiApi> {
  const requests: GeminiRequest[] = [];
  const server = await serveStandIn(({ method, url, body }) => {
    if (method !== 'POST' || !url.includes(':streamGenerateContent')) return json(chunk([{ text: '{}' }]));
    const request = JSON.parse(body) as GeminiRequest;
    requests.push(request);
    const turn = turnFor(turns, request, requests.length);
    const parts = 'shell' in turn ? [{ functionCall: { name: 'run_shell_command', args: { command: turn.shell } } }] : [{ text: turn.text }];
    return events(`data: ${JSON.stringify(chunk(parts))}\r\n\r\n`);
  }, host);
  return {
    ...server,
    requests,
    // Read from the latest request's conversation, which carries every earlier call and its response.
    toolOutput(n) {
      // The conversation grows by one call and its response a turn; the nth response is in every later request.
      const responses = requests.at(-1)?.contents.flatMap((c) => c.parts.filter((p) => p.functionResponse)) ?? [];
      const hit = responses[n - 1];
      if (!hit) throw new Error(`the agent sent no output for shell command ${n} (${requests.length} requests)`);
      return JSON.stringify(hit.functionResponse!.response);
    },
    said: userSide,
  };
}

/** A user's `~/.gemini` that logs in with GEMINI_API_KEY (a headless run cannot choose). */
export function geminiHome(home: string): void {
  mkdirSync(join(home, '.gemini'), { recursive: true });
  writeFileSync(join(home, '.gemini', 'settings.json'), JSON.stringify({ security: { auth: { selectedType: 'gemini-api-key' } } }));
}
