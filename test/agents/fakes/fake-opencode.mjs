#!/usr/bin/env node
/**
 * A fake `opencode` for tests: `opencode run --format json [--model p/m]
 * [--session id]` with the message piped on stdin, answering in the events
 * `opencode run --format json` writes (step_start, text, tool_use,
 * step_finish with cost, done; see src/agents/cli/opencodeEvents.ts).
 * Scenarios: lib.mjs.
 */
import { args, flag, hang, logStart, readStdin, scenario, send, turn } from './lib.mjs';

logStart();
if (args[0] !== 'run' || flag('--format') !== 'json') {
  process.stderr.write('fake opencode: expected "run --format json"\n');
  process.exit(1);
}
const resumed = flag('--session');
const prompt = readStdin();
const sessionID = resumed ?? 'ses_fake1';
const emit = (type, data) => send({ type, timestamp: Date.now(), sessionID, ...data });
const step = (n) => ({ id: `prt_${n}`, sessionID, messageID: 'msg_1' });
emit('step_start', { part: { ...step(0), type: 'step-start' } });

if (scenario === 'hang') hang();
else if (scenario === 'error') {
  emit('error', { error: { name: 'UnknownError', data: { message: 'the fake model refused' } } });
  process.exit(1);
} else if (scenario === 'login') {
  emit('error', { error: { name: 'ProviderAuthError', data: { providerID: 'anthropic', message: 'invalid x-api-key' } } });
  process.exit(1);
} else if (scenario === 'ratelimit') {
  emit('error', { error: { name: 'APIError', data: { message: 'Too Many Requests', statusCode: 429, isRetryable: true } } });
  process.exit(1);
} else if (scenario === 'truncated') {
  process.stdout.write('{"type":"text","timestamp":1,"sessionID":"ses_fake1","part":{"te');
  process.stderr.write('error: Bun crashed: Segmentation fault at address 0x0\n');
  process.exit(139);
} else {
  if (scenario === 'malformed') {
    process.stdout.write('not json at all\n');
    emit('snapshot', { part: { type: 'snapshot' } });
  }
  let n = 1;
  let text = '';
  for (const s of turn(prompt, resumed)) {
    if (s.text) {
      text += s.text;
      emit('text', { part: { ...step(n++), type: 'text', text: s.text, time: { start: 1, end: 2 } } });
      continue;
    }
    const tool = { shell: 'bash', edit: 'write', write: 'write', read: 'read' }[s.tool.name];
    s.tool.run();
    emit('tool_use', { part: { ...step(n++), type: 'tool', tool, callID: `call_${n}`, state: { status: 'completed', input: tool === 'bash' ? { command: s.tool.summary } : { filePath: s.tool.summary }, output: '', title: s.tool.summary } } });
  }
  emit('step_finish', { part: { ...step(n++), type: 'step-finish', reason: 'stop', cost: 0.0125, tokens: { input: 700, output: text.length, reasoning: 0, cache: { read: 0, write: 0 } } } });
  emit('done', { reason: 'idle', rejected: [] });
}
