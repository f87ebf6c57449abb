/**
 * What the four fake agent CLIs share: reading the prompt, logging how they
 * were started, choosing a scenario, and the answers a real agent would give
 * to Maestro's prompts (a plan, an edit, a verdict). Each fake-<tool>.mjs
 * writes these in its own tool's event format; only the model is fake.
 *
 * FAKE_AGENT_SCENARIO picks the scenario (default `work`):
 *   work       answer each prompt like a working agent, with tool calls
 *   clarify    an execute run asks `CLARIFY: Which colour?`; the resumed session writes the reply to colour.txt
 *   error      the tool reports an error event and exits 1
 *   login      the tool says its login expired and exits 1
 *   ratelimit  the model provider answers 429 and the tool exits 1
 *   truncated  the tool dies mid-stream: half a line, a stderr panic, exit 101
 *   malformed  like work, with a line that is not JSON and an event type nobody knows
 *   hang       starts, then waits to be killed
 * FAKE_AGENT_LOG: a file that gets one JSON line per start {pid, args, cwd, env}.
 * FAKE_AGENT_FILE: the file an execute run writes (default hello.txt).
 */
import { appendFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

export const scenario = process.env.FAKE_AGENT_SCENARIO ?? 'work';
export const args = process.argv.slice(2);

export function flag(name) {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
}

export function logStart() {
  const file = process.env.FAKE_AGENT_LOG;
  if (!file) return;
  const env = Object.fromEntries(['MAESTRO_MODEL', 'MAESTRO_ROLE', 'OPENCODE_PERMISSION', 'GEMINI_CLI_TRUST_WORKSPACE'].filter((k) => process.env[k] !== undefined).map((k) => [k, process.env[k]]));
  appendFileSync(file, JSON.stringify({ pid: process.pid, args, cwd: process.cwd(), env }) + '\n');
}

export function readStdin() {
  try {
    return readFileSync(0, 'utf8');
  } catch {
    return '';
  }
}

export const send = (event) => process.stdout.write(JSON.stringify(event) + '\n');

/** What Maestro asked for, read from its prompt. */
export function roleOf(prompt) {
  if (prompt.includes('Break this task into subtasks')) return 'plan';
  if (/review, read-only\)/.test(prompt)) return 'review';
  if (prompt.includes('Do not change any file. Explain why')) return 'reflect';
  return 'execute';
}

/**
 * The turn as a list of steps: {tool: {name, summary, run()}} and {text}.
 * `resumed` is the session id being continued, or undefined.
 */
export function turn(prompt, resumed) {
  const role = roleOf(prompt);
  const target = process.env.FAKE_AGENT_FILE ?? 'hello.txt';
  if (scenario === 'clarify' && !resumed && role === 'execute') return [{ text: 'CLARIFY: Which colour?' }];
  if (scenario === 'clarify' && resumed) {
    return [{ tool: { name: 'write', summary: 'colour.txt', run: () => writeFileSync('colour.txt', `${prompt.trim()}\n`) } }, { text: `Resumed ${resumed}: wrote ${prompt.trim()}` }];
  }
  if (role === 'plan') {
    const plan = { plan: 'One careful step.', subtasks: [{ title: 'Write the greeting', complexity: 'easy', priority: 'P1', deps: [], ownedFiles: [target], expectedOutput: `${target} exists` }] };
    return [{ tool: { name: 'read', summary: 'README.md', run: () => {} } }, { text: `A plan.\n\n\`\`\`json\n${JSON.stringify(plan)}\n\`\`\`` }];
  }
  if (role === 'review') return [{ text: 'Looks right.\n\n```json\n{"verdict": "approve", "findings": []}\n```' }];
  if (role === 'reflect') return [{ text: 'The last tries failed; write the file this time.' }];
  return [
    { tool: { name: 'shell', summary: 'ls', run: () => {} } },
    { tool: { name: 'edit', summary: target, run: () => { mkdirSync(dirname(target), { recursive: true }); writeFileSync(target, 'hello from the fake agent\n'); } } },
    { text: `Wrote ${target}.` },
  ];
}

/** Keeps the process alive until it is killed (the `hang` scenario). */
export function hang() {
  setInterval(() => {}, 1000);
}
