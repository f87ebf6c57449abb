/**
 * The claude provider end to end: the real @anthropic-ai/claude-agent-sdk
 * `query()` runs against fake-claude.mjs (passed as pathToClaudeCodeExecutable),
 * which speaks the same stream-json protocol. Only the model is fake.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ClaudeProvider } from '../../src/agents/claude.js';
import type { AgentRequest } from '../../src/agents/types.js';
import { budget } from '../helpers/budget.js';
import { bwrapUnusable } from '../helpers/bwrap.js';
import { observerAgentSeams } from '../../src/observer/agent/config.js';
import type { ExplorationDigest } from '../../src/observer/summary/digest.js';

const FAKE = fileURLToPath(new URL('./fake-claude.mjs', import.meta.url));
let dir: string;
let log: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'maestro-claude-'));
  log = join(dir, 'fake.log');
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function request(overrides: Partial<AgentRequest> = {}): AgentRequest {
  return {
    role: 'execute', taskTitle: 't', prompt: 'add a greeting', cwd: dir, model: 'sonnet', allowedTools: ['Read', 'Edit'], permissionMode: 'acceptEdits',
    onToken: () => {}, signal: new AbortController().signal, askUser: async () => '', ...overrides,
  };
}

function launches(): Array<{ pid: number; args: string[]; cwd: string }> {
  return readFileSync(log, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('claude provider (Agent SDK against a fake Claude Code)', () => {
  it('streams tokens, returns the result with usage and cost, and passes model and tools', async () => {
    const provider = new ClaudeProvider({ executable: FAKE, env: { FAKE_CLAUDE_LOG: log } });
    const tokens: string[] = [];
    const result = await provider.run(request({ onToken: (t) => tokens.push(t) }));
    expect(result.text).toBe('Echo from sonnet: add a greeting');
    expect(tokens.length).toBeGreaterThan(1);
    expect(tokens.join('')).toBe(result.text);
    expect(result.usage).toEqual({ inputTokens: 120, outputTokens: tokens.length, costUsd: 0.0042 });
    expect(result.sessionId).toBe('fake-session-1');
    const [launch] = launches();
    expect(launch!.cwd).toBe(dir);
    expect(launch!.args).toEqual(expect.arrayContaining(['--output-format', 'stream-json', '--input-format', 'stream-json', '--model=sonnet', '--include-partial-messages']));
    expect(launch!.args.join(' ')).toMatch(/--allowedTools[= ]Read,Edit/);
    expect(launch!.args.join(' ')).toMatch(/--permission-mode[= ]acceptEdits/);
  });

  it('resumes a session by id', async () => {
    const provider = new ClaudeProvider({ executable: FAKE, env: { FAKE_CLAUDE_LOG: log } });
    const result = await provider.run(request({ prompt: 'use hola', resumeSessionId: 'sess-42' }));
    expect(result.text).toBe('Resumed sess-42 with: use hola');
    expect(result.sessionId).toBe('sess-42');
    expect(launches()[0]!.args.join(' ')).toMatch(/--resume[= ]sess-42/);
  });

  it('reports an error result as AGENT_FAILED with the reason', async () => {
    const provider = new ClaudeProvider({ executable: FAKE, env: { FAKE_CLAUDE_LOG: log, FAKE_CLAUDE_MODE: 'error' } });
    await expect(provider.run(request())).rejects.toMatchObject({ code: 'AGENT_FAILED', message: expect.stringContaining('the fake model refused') });
  });

  it('abort stops the Claude Code process', async () => {
    const provider = new ClaudeProvider({ executable: FAKE, env: { FAKE_CLAUDE_LOG: log, FAKE_CLAUDE_MODE: 'hang' } });
    const controller = new AbortController();
    const running = provider.run(request({ signal: controller.signal }));
    // Wait until the fake is up and has been sent the prompt (its init message arrives as a session id).
    await expect.poll(() => { try { return launches().length; } catch { return 0; } }, { timeout: budget(30_000) }).toBe(1);
    const { pid } = launches()[0]!;
    expect(pidAlive(pid)).toBe(true);
    controller.abort();
    await expect(running).rejects.toMatchObject({ code: 'INTERRUPTED' });
    await expect.poll(() => pidAlive(pid), { timeout: budget(30_000) }).toBe(false);
  });
});

describe.skipIf(bwrapUnusable())('claude provider in the agent sandbox', () => {
  it('starts Claude Code inside bwrap: its own PID namespace, the worktree writable, and the run completes', async () => {
    const provider = new ClaudeProvider({ executable: FAKE, env: { FAKE_CLAUDE_LOG: log } });
    const result = await provider.run(request({ sandbox: { spec: { kind: 'bwrap', hide: [], readOnly: [], writable: [] }, worktree: dir } }));
    expect(result.text).toBe('Echo from sonnet: add a greeting');
    const [launch] = launches();
    // Outside, a process has the machine's numbering; the first processes of a new namespace are 1, 2, 3.
    expect(launch!.pid).toBeLessThan(10);
    expect(launch!.cwd).toBe(dir);
  });

  it("runs the daemon observer's agent in the sandbox too (its summaries read a person's sessions)", async () => {
    const seams = observerAgentSeams({ provider: { kind: 'claude', executable: FAKE, env: { FAKE_CLAUDE_LOG: log } }, model: 'haiku', timeoutMs: 60_000, sandbox: { kind: 'bwrap', hide: [], readOnly: [], writable: [dir] } }, dir);
    const digest = { sessionId: 's1', explorationId: 'e1', question: 'Why?', slashCommands: [], status: 'done', tools: [], commands: [], files: [], responses: [], errors: [], tokens: { input: 0, output: 0 }, durationMs: null, previousHint: null } as unknown as ExplorationDigest;
    // The fake echoes instead of answering JSON: the call is refused, after it ran.
    await expect(seams.summarize(digest)).rejects.toMatchObject({ code: 'AGENT_ANSWER_INVALID' });
    expect(launches()[0]!.pid).toBeLessThan(10);
  });
});
