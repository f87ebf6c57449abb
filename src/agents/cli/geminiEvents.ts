/**
 * Parser for `gemini -p … --output-format stream-json` (Gemini CLI). Followed:
 * `JsonStreamEvent` in packages/core/src/output/types.ts and its use in
 * packages/cli/src/nonInteractiveCli.ts of google-gemini/gemini-cli at
 * 0.56.0-nightly.20260806 (commit 5411f11). One JSON object a line:
 *
 *   init {session_id, model}                       the session id; `--resume <id>` continues it
 *   message {role: user|assistant, content, delta} assistant deltas are the answer, in pieces
 *   tool_use {tool_name, tool_id, parameters}
 *   tool_result {tool_id, status: success|error, output, error: {type, message}}
 *   error {severity: warning|error, message}       not fatal by itself (loop detected, turn limit)
 *   result {status: success|error, error?: {type, message}, stats?: {input_tokens, output_tokens, ...}}
 *
 * Gemini reports tokens but no cost.
 */
import { brief, num, obj, str, type EventParser, type ParserSink, type StreamOutcome } from './jsonl.js';

function toolSummary(params: Record<string, unknown>): string | undefined {
  return brief(params.command ?? params.file_path ?? params.absolute_path ?? params.path ?? params.pattern ?? params.url ?? (Object.keys(params).length ? params : undefined));
}

export function createGeminiParser(sink: ParserSink): EventParser {
  let sessionId: string | null = null;
  let text = '';
  const tools = new Map<string, { name: string; summary: string | undefined }>();
  const warnings: string[] = [];
  let result: Record<string, unknown> | null = null;

  return {
    handle(event) {
      switch (event.type) {
        case 'init':
          sessionId = str(event.session_id) ?? sessionId;
          return true;
        case 'message': {
          const content = str(event.content);
          if (event.role === 'assistant' && content) {
            text += content;
            sink.token(content);
          }
          return true;
        }
        case 'tool_use': {
          const id = str(event.tool_id) ?? '?';
          const name = str(event.tool_name) ?? 'tool';
          const summary = toolSummary(obj(event.parameters));
          tools.set(id, { name, summary });
          sink.tool({ id, name, state: 'start', summary });
          return true;
        }
        case 'tool_result': {
          const id = str(event.tool_id) ?? '?';
          const failed = event.status === 'error';
          const started = tools.get(id);
          sink.tool({ id, name: started?.name ?? 'tool', state: failed ? 'failed' : 'done', summary: failed ? brief(obj(event.error).message) : started?.summary });
          return true;
        }
        case 'error':
          warnings.push(str(event.message) ?? 'error');
          return true;
        case 'result':
          result = event;
          return true;
        default:
          return false;
      }
    },
    outcome(): StreamOutcome {
      if (!result) return warnings.length ? { kind: 'error', message: warnings.join('; '), sessionId } : { kind: 'none', sessionId };
      if (result.status !== 'success') {
        const e = obj(result.error);
        const message = [str(e.type), str(e.message)].filter(Boolean).join(': ') || warnings.join('; ') || 'the run ended with status error';
        return { kind: 'error', message, sessionId };
      }
      const stats = obj(result.stats);
      return { kind: 'result', text, sessionId, usage: { inputTokens: num(stats.input_tokens), outputTokens: num(stats.output_tokens), costUsd: null } };
    },
  };
}
