#!/usr/bin/env node
/**
 * A fake `cursor-agent` for tests: `cursor-agent --print --output-format
 * stream-json [--model m] [--force] [--resume chatId] [--] <prompt>`, answering in
 * Cursor's documented stream-json format (system init, assistant messages,
 * tool_call started/completed, result; see src/agents/cli/cursorEvents.ts).
 * Scenarios: lib.mjs.
 */
import { args, flag, hang, logStart, scenario, send, turn } from './lib.mjs';

logStart();
// `cursor-agent status`: says in words whether it is logged in, and exits 0 either way.
if (args[0] === 'status') {
  process.stdout.write(process.env.FAKE_AGENT_LOGGED_IN === '0' ? 'Not logged in\n' : 'Logged in as fake@example.com\n');
  process.exit(0);
}
if (!args.includes('--print') || flag('--output-format') !== 'stream-json') {
  process.stderr.write('fake cursor-agent: expected --print --output-format stream-json\n');
  process.exit(2);
}
const resumed = flag('--resume');
// As the real CLI reads its argv (commander): after `--` everything is the prompt; before it, an argument
// starting with `-` is an option, and one it does not know ends the run.
const end = args.indexOf('--');
const prompt = end >= 0 ? args.slice(end + 1).join(' ') : (args.at(-1) ?? '');
if (end < 0 && prompt.startsWith('-')) {
  process.stderr.write(`error: unknown option '${prompt}'\n`);
  process.exit(1);
}
const session_id = resumed ?? 'cursor-chat-1';
send({ type: 'system', subtype: 'init', apiKeySource: 'login', cwd: process.cwd(), session_id, model: flag('--model') ?? 'auto', permissionMode: 'default' });
send({ type: 'user', message: { role: 'user', content: [{ type: 'text', text: prompt }] }, session_id });

if (scenario === 'hang') hang();
else if (scenario === 'error') {
  send({ type: 'result', subtype: 'error', is_error: true, duration_ms: 5, duration_api_ms: 5, result: 'the fake model refused', session_id });
  process.exit(1);
} else if (scenario === 'login') {
  process.stderr.write('Authentication required. Please run `cursor-agent login` first, or set CURSOR_API_KEY.\n');
  process.exit(1);
} else if (scenario === 'ratelimit') {
  process.stderr.write('Error: rate limit exceeded for this model; try again later\n');
  process.exit(1);
} else if (scenario === 'truncated') {
  send({ type: 'tool_call', subtype: 'started', call_id: 'c1', tool_call: { shellToolCall: { args: { command: 'ls' } } }, session_id });
  process.stdout.write('{"type":"assistant","mess');
  process.stderr.write('Segmentation fault\n');
  process.exit(139);
} else {
  if (scenario === 'malformed') {
    process.stdout.write('\u001b[2K\rWorking...\n');
    send({ type: 'interaction_query', session_id });
  }
  let n = 0;
  let text = '';
  for (const step of turn(prompt, resumed)) {
    if (step.text) {
      text += step.text;
      send({ type: 'assistant', message: { role: 'assistant', content: [{ type: 'text', text: step.text }] }, session_id });
      continue;
    }
    const call_id = `call-${n++}`;
    const key = { shell: 'shellToolCall', edit: 'editToolCall', write: 'writeToolCall', read: 'readToolCall' }[step.tool.name];
    const toolArgs = step.tool.name === 'shell' ? { command: step.tool.summary } : { path: step.tool.summary };
    send({ type: 'tool_call', subtype: 'started', call_id, tool_call: { [key]: { args: toolArgs } }, session_id });
    step.tool.run();
    send({ type: 'tool_call', subtype: 'completed', call_id, tool_call: { [key]: { args: toolArgs, result: { success: {} } } }, session_id });
  }
  send({ type: 'result', subtype: 'success', is_error: false, duration_ms: 5, duration_api_ms: 5, result: text, session_id, request_id: 'req-1', usage: { inputTokens: 800, outputTokens: text.length } });
}
