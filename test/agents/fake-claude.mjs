#!/usr/bin/env node
/**
 * A fake Claude Code executable for the claude provider's tests. It speaks the
 * stream-json protocol the real SDK drives (control_request initialize →
 * control_response; a user message → system init, partial stream events, an
 * assistant message, a result with usage and cost). Only the model is fake.
 *
 * Behaviour comes from FAKE_CLAUDE_MODE: "reply" (default), "hang" (never
 * answers the user message), "error" (a result with is_error), "clarify" (a
 * new session asks `CLARIFY: Which colour?`; a resumed one writes the prompt,
 * the answer, to colour.txt in its cwd). It writes its
 * pid and argv to FAKE_CLAUDE_LOG (one JSON line) so tests can check the flags
 * and that an abort ended the process.
 */
import { appendFileSync, writeFileSync } from 'node:fs';
import { createInterface } from 'node:readline';

const mode = process.env.FAKE_CLAUDE_MODE ?? 'reply';
const logFile = process.env.FAKE_CLAUDE_LOG;
const args = process.argv.slice(2);
if (logFile) appendFileSync(logFile, JSON.stringify({ pid: process.pid, args, cwd: process.cwd() }) + '\n');

const send = (message) => process.stdout.write(JSON.stringify(message) + '\n');
const flag = (name) => args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? (args.includes(`--${name}`) ? args[args.indexOf(`--${name}`) + 1] : undefined);
const resumed = flag('resume');
const sessionId = resumed ?? 'fake-session-1';
const model = flag('model') ?? 'default';
let uuid = 0;
const nextUuid = () => `00000000-0000-4000-8000-${String(++uuid).padStart(12, '0')}`;

function answer(prompt) {
  send({
    type: 'system', subtype: 'init', session_id: sessionId, uuid: nextUuid(), apiKeySource: 'none', claude_code_version: '0.0.0-fake',
    cwd: process.cwd(), tools: [], mcp_servers: [], model, permissionMode: flag('permission-mode') ?? 'default', slash_commands: [], output_style: 'default', skills: [], plugins: [],
  });
  if (mode === 'hang') return; // stays alive, reading stdin, until killed
  if (mode === 'clarify' && resumed) writeFileSync('colour.txt', `${prompt}\n`);
  const text = mode === 'clarify' && !resumed ? 'CLARIFY: Which colour?' : resumed ? `Resumed ${resumed} with: ${prompt}` : `Echo from ${model}: ${prompt}`;
  const pieces = text.match(/.{1,8}/gs) ?? [];
  for (const piece of pieces) {
    send({ type: 'stream_event', session_id: sessionId, uuid: nextUuid(), parent_tool_use_id: null, event: { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: piece } } });
  }
  send({
    type: 'assistant', session_id: sessionId, uuid: nextUuid(), parent_tool_use_id: null,
    message: { id: 'msg_1', type: 'message', role: 'assistant', model, content: [{ type: 'text', text }], stop_reason: 'end_turn', stop_sequence: null, usage: { input_tokens: 120, output_tokens: pieces.length } },
  });
  send({
    type: 'result', subtype: mode === 'error' ? 'error_during_execution' : 'success', is_error: mode === 'error', session_id: sessionId, uuid: nextUuid(),
    duration_ms: 5, duration_api_ms: 4, num_turns: 1, result: mode === 'error' ? '' : text, total_cost_usd: 0.0042,
    usage: { input_tokens: 120, output_tokens: pieces.length, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 }, modelUsage: {}, permission_denials: [],
    ...(mode === 'error' ? { errors: ['the fake model refused'] } : {}),
  });
}

const rl = createInterface({ input: process.stdin });
rl.on('line', (line) => {
  const message = JSON.parse(line);
  if (message.type === 'control_request') {
    send({ type: 'control_response', response: { subtype: 'success', request_id: message.request_id, response: { commands: [], agents: [], output_style: 'default', available_output_styles: [], models: [], account: {} } } });
  } else if (message.type === 'user') {
    const content = message.message?.content;
    const prompt = typeof content === 'string' ? content : content.map((c) => c.text ?? '').join('');
    answer(prompt);
  }
});
rl.on('close', () => process.exit(0));
