/**
 * The shared JSONL plumbing and the four parsers on recorded streams: lines
 * cut between chunks, lines that are not JSON (reported with their line
 * number), event types nobody knows (ignored and counted), and a stream that
 * ends without a result (the run fails with the last stderr lines).
 */
import { describe, expect, it } from 'vitest';
import type { AgentToolEvent } from '../types.js';
import { createCodexParser } from './codexEvents.js';
import { createCursorParser } from './cursorEvents.js';
import { failureFor, succeeded } from './failure.js';
import { createGeminiParser } from './geminiEvents.js';
import { JsonlReader, type EventParser, type JsonlExit, type ParserSink } from './jsonl.js';
import { createOpencodeParser } from './opencodeEvents.js';

function collect(create: (sink: ParserSink) => EventParser) {
  const tokens: string[] = [];
  const tools: AgentToolEvent[] = [];
  const reader = new JsonlReader(create({ token: (t) => tokens.push(t), tool: (e) => tools.push(e) }));
  return { reader, tokens, tools };
}

const lines = (...events: unknown[]) => events.map((e) => (typeof e === 'string' ? e : JSON.stringify(e))).join('\n') + '\n';

function exitOf(reader: JsonlReader, more: Partial<JsonlExit> = {}): JsonlExit {
  return { outcome: reader.end(), diagnostics: reader.diagnostics, code: 0, signal: null, stderr: [], spawnError: null, aborted: false, ...more };
}

describe('JsonlReader line splitting', () => {
  it('joins a line cut between chunks (bytes or text, even inside a UTF-8 character), accepts CRLF, and reads an unterminated last line at the end', () => {
    const seen: Record<string, unknown>[] = [];
    const reader = new JsonlReader({ handle: (e) => (seen.push(e), true), outcome: () => ({ kind: 'none', sessionId: null }) });
    reader.push('{"a":');
    reader.push('1}\r\n{"b"');
    expect(seen).toEqual([{ a: 1 }]);
    const accent = Buffer.from(':"é"}\n');
    reader.push(accent.subarray(0, 3)); // ':"' and the first byte of é
    reader.push(accent.subarray(3));
    expect(seen).toEqual([{ a: 1 }, { b: 'é' }]);
    for (const piece of ['{"x":"', 'a'.repeat(5), 'b'.repeat(5), '"}\n{"c":3}']) reader.push(piece);
    expect(seen).toEqual([{ a: 1 }, { b: 'é' }, { x: 'aaaaabbbbb' }]);
    reader.end();
    expect(seen).toEqual([{ a: 1 }, { b: 'é' }, { x: 'aaaaabbbbb' }, { c: 3 }]);
    expect(reader.diagnostics).toMatchObject({ lines: 4, malformed: [] });
  });
});

describe('JsonlReader', () => {
  it('reports lines that are not JSON objects with their 1-based line number and goes on', () => {
    const { reader, tokens } = collect(createCodexParser);
    reader.push(lines({ type: 'thread.started', thread_id: 't1' }, 'Reading prompt from stdin...', '[1,2]', '', { type: 'item.completed', item: { id: 'i', type: 'agent_message', text: 'hi' } }));
    reader.push(lines({ type: 'turn.completed', usage: { input_tokens: 3, output_tokens: 4 } }));
    const exit = exitOf(reader);
    expect(exit.diagnostics.malformed).toEqual([{ line: 2, text: 'Reading prompt from stdin...' }, { line: 3, text: '[1,2]' }]);
    expect(exit.diagnostics.lines).toBe(6);
    expect(tokens).toEqual(['hi']);
    expect(exit.outcome).toEqual({ kind: 'result', text: 'hi', sessionId: 't1', usage: { inputTokens: 3, outputTokens: 4, costUsd: null } });
    expect(succeeded(exit)).toBe(true);
  });

  it('ignores event types it does not know and counts them by type', () => {
    const { reader } = collect(createGeminiParser);
    reader.push(lines({ type: 'init', session_id: 's' }, { type: 'telemetry' }, { type: 'telemetry' }, { nope: 1 }, { type: 'result', status: 'success', stats: { input_tokens: 1, output_tokens: 2 } }));
    const exit = exitOf(reader);
    expect(exit.diagnostics.unknownTypes).toEqual({ telemetry: 2, '(no type)': 1 });
    expect(exit.outcome.kind).toBe('result');
  });
});

describe('a stream that ends without a result', () => {
  it('fails the run as AGENT_STREAM_BROKEN naming the exit, the torn line and the last stderr lines', () => {
    const { reader } = collect(createCursorParser);
    reader.push(lines({ type: 'system', subtype: 'init', session_id: 'c1' }));
    reader.push('{"type":"assistant","mess');
    const exit = exitOf(reader, { code: 139, stderr: ['warming up', 'Segmentation fault'] });
    const err = failureFor({ name: 'Cursor Agent', file: 'cursor-agent', loginHint: 'run `cursor-agent login`' }, exit);
    expect(err.code).toBe('AGENT_STREAM_BROKEN');
    expect(err.message).toBe('Cursor Agent ended without a result: it exited with 139 after 2 line(s) of output; lines that were not JSON: 2; last stderr: warming up | Segmentation fault');
    expect(err.details).toMatchObject({ sessionId: 'c1', stderr: ['warming up', 'Segmentation fault'] });
  });

  it('says so when the tool exited 0 without a result and wrote nothing to stderr', () => {
    const { reader } = collect(createOpencodeParser);
    reader.push(lines({ type: 'step_start', sessionID: 'ses_1', part: {} }, { type: 'step_finish', sessionID: 'ses_1', part: { reason: 'tool-calls', cost: 0.1 } }));
    const err = failureFor({ name: 'OpenCode', file: 'opencode', loginHint: 'x' }, exitOf(reader));
    expect(err.message).toBe('OpenCode ended without a result: it exited with 0 after 2 line(s) of output; stderr was empty');
  });

  it('names a missing executable, an expired login and a rate limit', () => {
    const ctx = { name: 'Gemini CLI', file: '/nowhere/gemini', loginHint: 'set GEMINI_API_KEY', loginExitCodes: [41] };
    const blank = () => exitOf(collect(createGeminiParser).reader);
    const enoent = Object.assign(new Error('spawn /nowhere/gemini ENOENT'), { code: 'ENOENT' });
    expect(failureFor(ctx, { ...blank(), code: null, spawnError: enoent })?.code).toBe('AGENT_NOT_INSTALLED');
    expect(failureFor(ctx, { ...blank(), code: 41, stderr: ['bye'] })?.message).toMatch(/^Gemini CLI is not logged in or its login expired \(bye\)\. To log in: set GEMINI_API_KEY/);
    expect(failureFor(ctx, { ...blank(), code: 1, stderr: ['[API Error: 429 Too Many Requests]'] })?.code).toBe('AGENT_RATE_LIMITED');
    expect(failureFor(ctx, { ...blank(), aborted: true, code: null, signal: 'SIGTERM' })?.code).toBe('INTERRUPTED');
    // A line number is not an HTTP status.
    expect(failureFor(ctx, { ...blank(), code: 1, stderr: ['TypeError at src/a.ts:401:12', 'retrying 429 times'] })?.code).toBe('AGENT_STREAM_BROKEN');
    expect(failureFor(ctx, { ...blank(), code: 1, stderr: ['request failed with status 401'] })?.code).toBe('AGENT_LOGIN_REQUIRED');
  });
});

describe('the four parsers on recorded streams', () => {
  it('codex: session, messages as tokens, tool phases, summed usage; turn.failed is the error', () => {
    const { reader, tokens, tools } = collect(createCodexParser);
    reader.push(lines(
      { type: 'thread.started', thread_id: '0199a213-81c0-7800-8aa1-bbab2a035a53' },
      { type: 'turn.started' },
      { type: 'item.started', item: { id: 'item_1', type: 'command_execution', command: 'bash -lc ls', aggregated_output: '', exit_code: null, status: 'in_progress' } },
      { type: 'item.completed', item: { id: 'item_1', type: 'command_execution', command: 'bash -lc ls', aggregated_output: 'a\n', exit_code: 2, status: 'failed' } },
      { type: 'item.completed', item: { id: 'item_2', type: 'reasoning', text: 'thinking' } },
      { type: 'item.completed', item: { id: 'item_3', type: 'file_change', changes: [{ path: 'a.ts', kind: 'update' }], status: 'completed' } },
      { type: 'item.completed', item: { id: 'item_4', type: 'agent_message', text: 'Done.' } },
      { type: 'turn.completed', usage: { input_tokens: 24763, cached_input_tokens: 24448, output_tokens: 122 } },
    ));
    expect(exitOf(reader).outcome).toEqual({ kind: 'result', text: 'Done.', sessionId: '0199a213-81c0-7800-8aa1-bbab2a035a53', usage: { inputTokens: 24763, outputTokens: 122, costUsd: null } });
    expect(tokens).toEqual(['Done.']);
    expect(tools.map((t) => [t.name, t.state, t.summary])).toEqual([['command_execution', 'start', 'bash -lc ls'], ['command_execution', 'failed', 'bash -lc ls'], ['file_change', 'done', 'update a.ts']]);
    const failed = collect(createCodexParser);
    failed.reader.push(lines({ type: 'thread.started', thread_id: 't' }, { type: 'error', message: 'stream error; retrying' }, { type: 'turn.failed', error: { message: 'model overloaded' } }));
    expect(failed.reader.end()).toEqual({ kind: 'error', message: 'model overloaded', sessionId: 't' });
  });

  it('gemini: assistant deltas make the answer; a result with status error is the error', () => {
    const { reader, tokens, tools } = collect(createGeminiParser);
    reader.push(lines(
      { type: 'init', timestamp: 't', session_id: 'c3a1', model: 'gemini-2.5-pro' },
      { type: 'message', role: 'user', content: 'do it' },
      { type: 'message', role: 'assistant', content: 'Do', delta: true },
      { type: 'tool_use', tool_name: 'read_file', tool_id: 'r1', parameters: { absolute_path: '/w/a.ts' } },
      { type: 'tool_result', tool_id: 'r1', status: 'error', error: { type: 'not_found', message: 'no such file' } },
      { type: 'message', role: 'assistant', content: 'ne.', delta: true },
      { type: 'result', status: 'success', stats: { total_tokens: 30, input_tokens: 20, output_tokens: 10 } },
    ));
    expect(reader.end()).toEqual({ kind: 'result', text: 'Done.', sessionId: 'c3a1', usage: { inputTokens: 20, outputTokens: 10, costUsd: null } });
    expect(tokens).toEqual(['Do', 'ne.']);
    expect(tools.map((t) => [t.name, t.state, t.summary])).toEqual([['read_file', 'start', '/w/a.ts'], ['read_file', 'failed', 'no such file']]);
    const failed = collect(createGeminiParser);
    failed.reader.push(lines({ type: 'init', session_id: 's' }, { type: 'result', status: 'error', error: { type: 'FatalTurnLimitedError', message: 'turn limit' } }));
    expect(failed.reader.end()).toEqual({ kind: 'error', message: 'FatalTurnLimitedError: turn limit', sessionId: 's' });
  });

  it('cursor: the result text wins, tool names come from the tool_call key, is_error is the error', () => {
    const { reader, tools } = collect(createCursorParser);
    reader.push(lines(
      { type: 'system', subtype: 'init', session_id: 'chat-9', model: 'Claude 4 Sonnet' },
      { type: 'tool_call', subtype: 'started', call_id: 'c1', tool_call: { writeToolCall: { args: { path: 'a.txt', fileText: 'x' } } }, session_id: 'chat-9' },
      { type: 'tool_call', subtype: 'completed', call_id: 'c1', tool_call: { writeToolCall: { args: { path: 'a.txt' }, result: { success: { linesCreated: 1 } } } }, session_id: 'chat-9' },
      { type: 'tool_call', subtype: 'completed', call_id: 'c2', tool_call: { function: { name: 'grep', arguments: '{}' } }, session_id: 'chat-9' },
      { type: 'assistant', message: { role: 'assistant', content: [{ type: 'text', text: 'All done' }] }, session_id: 'chat-9' },
      { type: 'result', subtype: 'success', is_error: false, result: 'All done', session_id: 'chat-9' },
    ));
    expect(reader.end()).toEqual({ kind: 'result', text: 'All done', sessionId: 'chat-9', usage: { inputTokens: 0, outputTokens: 0, costUsd: null } });
    expect(tools.map((t) => [t.name, t.state])).toEqual([['write', 'start'], ['write', 'done'], ['grep', 'done']]);
  });

  it('opencode: cost and tokens summed over steps; done ends the run; an error event is the error', () => {
    const { reader, tools } = collect(createOpencodeParser);
    const ev = (type: string, part: object) => ({ type, timestamp: 1, sessionID: 'ses_a', part });
    reader.push(lines(
      ev('step_start', { type: 'step-start' }),
      ev('tool_use', { type: 'tool', tool: 'bash', callID: 'k1', state: { status: 'completed', input: { command: 'ls' }, output: 'a', title: 'ls' } }),
      ev('step_finish', { type: 'step-finish', reason: 'tool-calls', cost: 0.01, tokens: { input: 100, output: 10, reasoning: 5, cache: { read: 0, write: 0 } } }),
      ev('step_start', { type: 'step-start' }),
      ev('text', { type: 'text', text: 'Finished.' }),
      ev('step_finish', { type: 'step-finish', reason: 'stop', cost: 0.02, tokens: { input: 200, output: 20, reasoning: 0, cache: { read: 0, write: 0 } } }),
      { type: 'done', timestamp: 2, sessionID: 'ses_a', reason: 'idle', rejected: [] },
    ));
    const outcome = reader.end();
    expect(outcome).toMatchObject({ kind: 'result', text: 'Finished.', sessionId: 'ses_a', usage: { inputTokens: 300, outputTokens: 35 } });
    expect(outcome.kind === 'result' && outcome.usage.costUsd).toBeCloseTo(0.03, 10);
    expect(tools).toEqual([{ id: 'k1', name: 'bash', state: 'done', summary: 'ls' }]);
    const failed = collect(createOpencodeParser);
    failed.reader.push(lines({ type: 'error', sessionID: 's', error: { name: 'ProviderAuthError', data: { message: 'invalid x-api-key' } } }));
    expect(failed.reader.end()).toEqual({ kind: 'error', message: 'invalid x-api-key', sessionId: 's' });
  });
});
