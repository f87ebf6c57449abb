#!/usr/bin/env node
/**
 * A fake `gemini` for tests: `gemini --output-format stream-json [--resume id]
 * --prompt <text>` with the prompt piped on stdin, answering in Gemini CLI's
 * stream-json format (init, message deltas, tool_use/tool_result, result; see
 * src/agents/cli/geminiEvents.ts). Scenarios: lib.mjs.
 */
import { flag, hang, logStart, readStdin, scenario, send, turn } from './lib.mjs';

logStart();
if (flag('--output-format') !== 'stream-json' || flag('--prompt') === undefined) {
  process.stderr.write(`fake gemini: expected --output-format stream-json and --prompt\n`);
  process.exit(42);
}
const resumed = flag('--resume');
const prompt = readStdin();
const now = () => new Date().toISOString();
const sessionId = resumed ?? 'gemini-session-1';
send({ type: 'init', timestamp: now(), session_id: sessionId, model: flag('--model') ?? 'auto' });
send({ type: 'message', timestamp: now(), role: 'user', content: prompt });

if (scenario === 'hang') hang();
else if (scenario === 'error') {
  send({ type: 'result', timestamp: now(), status: 'error', error: { type: 'FatalToolExecutionError', message: 'the fake model refused' } });
  process.exit(54);
} else if (scenario === 'login') {
  process.stderr.write('Error authenticating: Request had invalid authentication credentials. Expected OAuth 2 access token.\n');
  process.exit(41);
} else if (scenario === 'ratelimit') {
  send({ type: 'error', timestamp: now(), severity: 'error', message: '[API Error: You exceeded your current quota, please check your plan and billing details. (Status: RESOURCE_EXHAUSTED)]' });
  process.exit(1);
} else if (scenario === 'truncated') {
  send({ type: 'tool_use', timestamp: now(), tool_name: 'run_shell_command', tool_id: 't1', parameters: { command: 'ls' } });
  process.stdout.write('{"type":"message","role":"assis');
  process.stderr.write('FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory\n');
  process.exit(134);
} else {
  if (scenario === 'malformed') {
    process.stdout.write('Loaded cached credentials.\n');
    send({ type: 'telemetry', timestamp: now() });
  }
  let n = 0;
  let text = '';
  for (const step of turn(prompt, resumed)) {
    if (step.text) {
      text += step.text;
      for (const piece of step.text.match(/[\s\S]{1,16}/g) ?? []) send({ type: 'message', timestamp: now(), role: 'assistant', content: piece, delta: true });
      continue;
    }
    const id = `tool-${n++}`;
    const name = { shell: 'run_shell_command', edit: 'write_file', write: 'write_file', read: 'read_file' }[step.tool.name];
    send({ type: 'tool_use', timestamp: now(), tool_name: name, tool_id: id, parameters: name === 'run_shell_command' ? { command: step.tool.summary } : { file_path: step.tool.summary } });
    step.tool.run();
    send({ type: 'tool_result', timestamp: now(), tool_id: id, status: 'success', output: '' });
  }
  send({ type: 'result', timestamp: now(), status: 'success', stats: { total_tokens: 900 + text.length, input_tokens: 900, output_tokens: text.length, cached: 0, input: 900, duration_ms: 5, tool_calls: n, models: {} } });
}
