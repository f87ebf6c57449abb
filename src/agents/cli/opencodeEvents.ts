/**
 * Parser for `opencode run --format json` (OpenCode). Followed: the `emit()`
 * calls in packages/opencode/src/cli/cmd/run.ts of anomalyco/opencode (the
 * sst/opencode repository's new home) at commit 00f9806, and the part types
 * of its SDK. One JSON object a line, each {type, timestamp, sessionID, ...}:
 *
 *   step_start {part: {type: step-start}}
 *   text {part: {type: text, text}}                       a finished text part
 *   reasoning {part: {text}}                              only with --thinking; ignored
 *   tool_use {part: {tool, callID, state: {status: completed|error, input, output, error, title}}}
 *                                                         sent once the call has ended
 *   step_finish {part: {reason: stop|tool-calls|..., cost, tokens: {input, output, reasoning, cache}}}
 *   error {error: {name, data: {message}}}
 *   done {reason: idle, rejected: [permissions]}          newer builds: the run is over
 *
 * `--session <id>` continues a session. OpenCode reports cost per step; older
 * builds send no `done`, so a last step that finished for any reason but
 * `tool-calls` also counts as the end.
 */
import { brief, num, obj, str, type EventParser, type ParserSink, type StreamOutcome } from './jsonl.js';

export function createOpencodeParser(sink: ParserSink): EventParser {
  let sessionId: string | null = null;
  const texts: string[] = [];
  const usage = { inputTokens: 0, outputTokens: 0, costUsd: 0 };
  let lastFinish: string | null = null;
  let done = false;
  let error: string | null = null;

  return {
    handle(event) {
      sessionId = str(event.sessionID) ?? sessionId;
      const part = obj(event.part);
      switch (event.type) {
        case 'step_start':
          lastFinish = null;
          return true;
        case 'reasoning':
          return true;
        case 'text': {
          const t = str(part.text);
          if (t) {
            sink.token(`${texts.length ? '\n' : ''}${t}`);
            texts.push(t);
          }
          return true;
        }
        case 'tool_use': {
          const state = obj(part.state);
          const input = obj(state.input);
          const failed = state.status === 'error';
          sink.tool({
            id: str(part.callID) ?? str(part.id) ?? '?',
            name: str(part.tool) ?? 'tool',
            state: failed ? 'failed' : 'done',
            summary: failed ? brief(state.error) : brief(str(state.title) ?? input.command ?? input.filePath ?? input.path),
          });
          return true;
        }
        case 'step_finish': {
          const tokens = obj(part.tokens);
          usage.inputTokens += num(tokens.input);
          usage.outputTokens += num(tokens.output) + num(tokens.reasoning);
          usage.costUsd += num(part.cost);
          lastFinish = str(part.reason) ?? 'stop';
          return true;
        }
        case 'error': {
          const e = obj(event.error);
          error = str(obj(e.data).message) ?? str(e.message) ?? str(e.name) ?? 'error';
          return true;
        }
        case 'done':
          done = true;
          return true;
        default:
          return false;
      }
    },
    outcome(): StreamOutcome {
      if (error) return { kind: 'error', message: error, sessionId };
      if (done || (lastFinish !== null && lastFinish !== 'tool-calls')) return { kind: 'result', text: texts.join('\n'), sessionId, usage };
      return { kind: 'none', sessionId };
    },
  };
}
