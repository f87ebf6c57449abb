/**
 * Parser for `codex exec --json` (Codex CLI). Followed: the `ThreadEvent` and
 * `ThreadItem` types of codex-rs/exec/src/exec_events.rs on openai/codex main
 * at commit 08a1f30 (late 2026; the thread/turn/item format codex has used
 * since 0.44). One JSON object a line:
 *
 *   thread.started {thread_id}            the session id; `codex exec resume <id>` continues it
 *   turn.started {}
 *   item.started|item.updated|item.completed {item: {id, type, ...}}
 *     agent_message {text}                 the answer (whole messages, no deltas)
 *     reasoning {text} · todo_list · plan  shown to nobody here
 *     command_execution {command, exit_code, status: in_progress|completed|failed|declined}
 *     file_change {changes: [{path, kind}], status} · mcp_tool_call {server, tool, status}
 *     web_search {query} · collab_tool_call {tool, status} · error {message} (not fatal)
 *   turn.completed {usage: {input_tokens, cached_input_tokens, output_tokens}}   the result
 *   turn.failed {error: {message}} · error {message}                             fatal
 *   item.plan.delta · request_user_input                                          known, ignored
 *
 * Codex reports no cost; the provider prices tokens when the config says how.
 */
import type { AgentToolEvent } from '../types.js';
import { brief, num, obj, str, type EventParser, type ParserSink, type StreamOutcome } from './jsonl.js';

const TOOL_ITEMS = new Set(['command_execution', 'file_change', 'mcp_tool_call', 'web_search', 'collab_tool_call']);
const QUIET_ITEMS = new Set(['reasoning', 'todo_list', 'plan', 'error']);

function toolName(item: Record<string, unknown>): string {
  const type = str(item.type)!;
  if (type === 'mcp_tool_call') return `${str(item.server) ?? 'mcp'}.${str(item.tool) ?? 'tool'}`;
  return type;
}

function toolSummary(item: Record<string, unknown>): string | undefined {
  if (item.type === 'command_execution') return brief(item.command);
  if (item.type === 'file_change' && Array.isArray(item.changes)) return item.changes.map((c) => `${str(obj(c).kind) ?? 'edit'} ${str(obj(c).path) ?? '?'}`).join(', ');
  if (item.type === 'web_search') return brief(item.query);
  if (item.type === 'mcp_tool_call') return brief(item.arguments);
  return undefined;
}

function toolState(item: Record<string, unknown>): AgentToolEvent['state'] {
  const status = str(item.status);
  if (status === 'failed' || status === 'declined') return 'failed';
  if (item.type === 'command_execution' && typeof item.exit_code === 'number' && item.exit_code !== 0) return 'failed';
  return 'done';
}

export function createCodexParser(sink: ParserSink): EventParser {
  let sessionId: string | null = null;
  const messages: string[] = [];
  const usage = { inputTokens: 0, outputTokens: 0 };
  let completed = false;
  let turnFailed: string | null = null;
  /** A top-level `error`: fatal unless a completed turn follows (codex reports retried stream errors this way too). */
  let lastError: string | null = null;

  const onItem = (phase: 'started' | 'updated' | 'completed', item: Record<string, unknown>): boolean => {
    const type = str(item.type);
    const id = str(item.id) ?? '?';
    if (type === 'agent_message') {
      if (phase === 'completed' && str(item.text)) {
        messages.push(item.text as string);
        sink.token(`${messages.length > 1 ? '\n' : ''}${item.text as string}`);
      }
      return true;
    }
    if (type && TOOL_ITEMS.has(type)) {
      if (phase === 'started') sink.tool({ id, name: toolName(item), state: 'start', summary: toolSummary(item) });
      if (phase === 'completed') sink.tool({ id, name: toolName(item), state: toolState(item), summary: toolSummary(item) });
      return true;
    }
    return type !== undefined && QUIET_ITEMS.has(type);
  };

  return {
    handle(event) {
      switch (event.type) {
        case 'thread.started':
          sessionId = str(event.thread_id) ?? sessionId;
          return true;
        case 'turn.started':
        case 'item.plan.delta':
        case 'request_user_input':
          return true;
        case 'item.started':
        case 'item.updated':
        case 'item.completed':
          return onItem((event.type as string).slice(5) as 'started' | 'updated' | 'completed', obj(event.item));
        case 'turn.completed': {
          const u = obj(event.usage);
          usage.inputTokens += num(u.input_tokens);
          usage.outputTokens += num(u.output_tokens);
          completed = true;
          return true;
        }
        case 'turn.failed':
          turnFailed = str(obj(event.error).message) ?? 'the turn failed';
          return true;
        case 'error':
          lastError = str(event.message) ?? 'error';
          return true;
        default:
          return false;
      }
    },
    outcome(): StreamOutcome {
      if (turnFailed) return { kind: 'error', message: turnFailed, sessionId };
      if (completed) return { kind: 'result', text: messages.join('\n'), sessionId, usage: { ...usage, costUsd: null } };
      if (lastError) return { kind: 'error', message: lastError, sessionId };
      return { kind: 'none', sessionId };
    },
  };
}
