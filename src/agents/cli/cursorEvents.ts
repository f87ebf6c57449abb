/**
 * Parser for `cursor-agent -p --output-format stream-json` (Cursor Agent CLI,
 * closed source). Followed: the documented format at
 * https://cursor.com/docs/cli/reference/output-format (read 2026-12-01). One
 * JSON object a line, each carrying session_id:
 *
 *   system {subtype: init, session_id, model, cwd, permissionMode}   `--resume <chatId>` continues it
 *   user {message}                                                    the prompt echoed
 *   assistant {message: {content: [{type: text, text}]}}              one line per message (deltas with
 *                                                                     --stream-partial-output)
 *   tool_call {subtype: started|completed, call_id, tool_call: {<name>ToolCall: {args, result?}}}
 *                result is {success: …} or {error|rejected: …}
 *   thinking {subtype: delta|completed}                               known, ignored
 *   result {subtype: success, is_error, result, session_id, duration_ms, usage?}
 *
 * "On failure, the process exits with a non-zero code and the stream may end
 * early without a terminal event; an error message is written to stderr."
 * Newer builds add usage {inputTokens, outputTokens, …} to result; there is no cost.
 */
import { brief, num, obj, str, type EventParser, type ParserSink, type StreamOutcome } from './jsonl.js';

/** `{shellToolCall: {args, result}}` → ['shell', {args, result}]; `{function: {name, arguments}}` → [name, …]. */
function unwrapTool(toolCall: Record<string, unknown>): { name: string; body: Record<string, unknown> } {
  const [key, value] = Object.entries(toolCall)[0] ?? ['tool', {}];
  const body = obj(value);
  if (key === 'function') return { name: str(body.name) ?? 'function', body: { args: body.arguments } };
  return { name: key.replace(/ToolCall$/, ''), body };
}

export function createCursorParser(sink: ParserSink): EventParser {
  let sessionId: string | null = null;
  let text = '';
  let result: Record<string, unknown> | null = null;

  return {
    handle(event) {
      sessionId = str(event.session_id) ?? sessionId;
      switch (event.type) {
        case 'system':
        case 'user':
        case 'thinking':
          return true;
        case 'assistant': {
          const content = obj(event.message).content;
          const piece = Array.isArray(content) ? content.map((c) => (obj(c).type === 'text' ? str(obj(c).text) ?? '' : '')).join('') : '';
          if (piece) {
            text += piece;
            sink.token(piece);
          }
          return true;
        }
        case 'tool_call': {
          const { name, body } = unwrapTool(obj(event.tool_call));
          const id = str(event.call_id) ?? '?';
          const args = obj(body.args);
          const summary = brief(args.command ?? args.path ?? args.pattern ?? args.query);
          if (event.subtype === 'started') sink.tool({ id, name, state: 'start', summary });
          else if (event.subtype === 'completed') {
            const r = obj(body.result);
            sink.tool({ id, name, state: 'success' in r || !Object.keys(r).length ? 'done' : 'failed', summary });
          }
          return true;
        }
        case 'result':
          result = event;
          return true;
        default:
          return false;
      }
    },
    outcome(): StreamOutcome {
      if (!result) return { kind: 'none', sessionId };
      if (result.is_error === true || (result.subtype !== undefined && result.subtype !== 'success')) {
        return { kind: 'error', message: str(result.result) || str(result.error) || `the run ended with ${str(result.subtype) ?? 'an error'}`, sessionId };
      }
      const usage = obj(result.usage);
      return { kind: 'result', text: str(result.result) || text, sessionId, usage: { inputTokens: num(usage.inputTokens), outputTokens: num(usage.outputTokens), costUsd: null } };
    },
  };
}
