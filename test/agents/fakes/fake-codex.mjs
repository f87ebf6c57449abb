#!/usr/bin/env node
/**
 * A fake `codex` for tests: `codex exec --json [options] [resume <id>] -`
 * reads the prompt from stdin and answers in the `codex exec --json` event
 * format (thread.started, item.*, turn.completed; see
 * src/agents/cli/codexEvents.ts). Scenarios: lib.mjs.
 */
import { args, hang, logStart, readStdin, scenario, send, turn } from './lib.mjs';

logStart();
// `codex login status`: exit 0 when logged in (FAKE_AGENT_LOGGED_IN=0 says not).
if (args[0] === 'login' && args[1] === 'status') {
  if (process.env.FAKE_AGENT_LOGGED_IN === '0') {
    process.stderr.write('Not logged in\n');
    process.exit(1);
  }
  process.stderr.write('Logged in using ChatGPT\n');
  process.exit(0);
}
if (args[0] !== 'exec' || !args.includes('--json')) {
  process.stderr.write(`fake codex: expected "exec --json", got ${args.join(' ')}\n`);
  process.exit(2);
}
const r = args.indexOf('resume');
const resumed = r >= 0 ? args[r + 1] : undefined;
const prompt = readStdin();
const threadId = resumed ?? 'codex-thread-1';
send({ type: 'thread.started', thread_id: threadId });
send({ type: 'turn.started' });

function fail(message, code = 1) {
  send({ type: 'error', message });
  send({ type: 'turn.failed', error: { message } });
  process.exit(code);
}

if (scenario === 'hang') hang();
else if (scenario === 'error') fail('the fake model refused');
else if (scenario === 'login') fail('unexpected status 401 Unauthorized: Your access token could not be refreshed because your refresh token has expired. Please log out and sign in again.');
else if (scenario === 'ratelimit') fail('exceeded retry limit, last status: 429 Too Many Requests');
else if (scenario === 'truncated') {
  send({ type: 'item.started', item: { id: 'item_0', type: 'command_execution', command: 'bash -lc ls', aggregated_output: '', exit_code: null, status: 'in_progress' } });
  process.stdout.write('{"type":"item.completed","item":{"id":"item_0","ty');
  process.stderr.write('thread \'main\' panicked at core/src/codex.rs:1: connection reset by peer\n');
  process.exit(101);
} else {
  if (scenario === 'malformed') {
    process.stdout.write('Reading prompt from stdin...\n');
    send({ type: 'session.configured', model: 'fake' });
  }
  let n = 0;
  let text = '';
  for (const step of turn(prompt, resumed)) {
    const id = `item_${n++}`;
    if (step.text) {
      text += step.text;
      send({ type: 'item.completed', item: { id, type: 'agent_message', text: step.text } });
    } else if (step.tool.name === 'edit' || step.tool.name === 'write') {
      step.tool.run();
      send({ type: 'item.completed', item: { id, type: 'file_change', changes: [{ path: step.tool.summary, kind: 'add' }], status: 'completed' } });
    } else {
      const command = `bash -lc '${step.tool.name === 'read' ? 'cat' : step.tool.summary} ${step.tool.name === 'read' ? step.tool.summary : ''}'`;
      send({ type: 'item.started', item: { id, type: 'command_execution', command, aggregated_output: '', exit_code: null, status: 'in_progress' } });
      step.tool.run();
      send({ type: 'item.completed', item: { id, type: 'command_execution', command, aggregated_output: 'README.md\n', exit_code: 0, status: 'completed' } });
    }
  }
  send({ type: 'turn.completed', usage: { input_tokens: 1000, cached_input_tokens: 200, output_tokens: text.length } });
}
