/**
 * The codex, gemini, cursor and opencode providers against fake executables
 * that speak each tool's event format (test/agents/fakes): the argv each tool
 * is started with, tokens, tool phases, usage and cost, the session id and
 * its resume flag, the four failure reasons, and abort. Only the model is fake.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CliAgentProvider, type CliProviderOptions } from '../../src/agents/cli/provider.js';
import type { CliToolKind } from '../../src/agents/cli/tools.js';
import type { AgentRequest, AgentToolEvent } from '../../src/agents/types.js';
import { FAKES } from './fakes/bin.js';
import { budget } from '../helpers/budget.js';
import { bwrapUnusable } from '../helpers/bwrap.js';

const unusable = bwrapUnusable();

let dir: string;
let log: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'maestro-cli-agent-'));
  log = join(dir, 'fake.log');
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const EXECUTE_PROMPT = '# Task: greet\n\n## Your job\nMake the change in this working directory.';

function provider(kind: CliToolKind, scenario = 'work', more: Partial<CliProviderOptions> = {}) {
  // A home of its own: in the sandbox the provider makes the tool's state folders there, not in the tester's home.
  return new CliAgentProvider({ kind, executable: FAKES[kind], env: { HOME: join(dir, 'home'), FAKE_AGENT_LOG: log, FAKE_AGENT_SCENARIO: scenario }, ...more });
}

function request(overrides: Partial<AgentRequest> = {}): AgentRequest {
  return {
    role: 'execute', taskTitle: 'greet', prompt: EXECUTE_PROMPT, cwd: dir, model: 'm-strong', allowedTools: [], permissionMode: 'acceptEdits',
    onToken: () => {}, signal: new AbortController().signal, askUser: async () => '', ...overrides,
  };
}

function launches(): Array<{ pid: number; args: string[]; cwd: string; env: Record<string, string> }> {
  return readFileSync(log, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
}

const pidAlive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** What each tool must be started with, per the flags docs/agents.md lists. */
const EXPECT: Record<CliToolKind, { session: string; resumeArgs: (id: string) => string[]; editArgs: string[]; readOnly: (l: ReturnType<typeof launches>[number]) => void; cost: number }> = {
  codex: {
    session: 'codex-thread-1', resumeArgs: (id) => ['resume', id, '-'], editArgs: ['exec', '--json', '--model', 'm-strong', '--sandbox', 'workspace-write', '-'],
    readOnly: (l) => expect(l.args.join(' ')).toContain('--sandbox read-only'), cost: 0,
  },
  gemini: {
    session: 'gemini-session-1', resumeArgs: (id) => ['--resume', id], editArgs: ['--output-format', 'stream-json', '--model', 'm-strong', '--approval-mode', 'yolo'],
    readOnly: (l) => expect(l.args.join(' ')).toContain('--approval-mode default'), cost: 0,
  },
  cursor: {
    session: 'cursor-chat-1', resumeArgs: (id) => ['--resume', id], editArgs: ['--print', '--output-format', 'stream-json', '--trust', '--model', 'm-strong', '--force'],
    readOnly: (l) => {
      expect(l.args).not.toContain('--force');
      expect(l.args.join(' ')).toContain('--mode ask');
    },
    cost: 0,
  },
  opencode: {
    session: 'ses_fake1', resumeArgs: (id) => ['--session', id], editArgs: ['run', '--format', 'json', '--model', 'm-strong'],
    readOnly: (l) => expect(JSON.parse(l.env.OPENCODE_PERMISSION!)).toEqual({ edit: 'deny', bash: 'deny', webfetch: 'deny', external_directory: 'deny' }), cost: 0.0125,
  },
};

describe.each(Object.keys(FAKES) as CliToolKind[])('%s provider against its fake', (kind) => {
  const want = EXPECT[kind];

  it('streams tokens and tool phases, edits the worktree, and returns the answer, session, usage and cost', async () => {
    const tokens: string[] = [];
    const tools: AgentToolEvent[] = [];
    const result = await provider(kind).run(request({ onToken: (t) => tokens.push(t), onTool: (e) => tools.push(e) }));
    expect(result.text).toBe('Wrote hello.txt.');
    expect(tokens.join('')).toBe('Wrote hello.txt.');
    expect(result.sessionId).toBe(want.session);
    expect(result.usage.inputTokens).toBeGreaterThan(0);
    expect(result.usage.outputTokens).toBe('Wrote hello.txt.'.length);
    expect(result.usage.costUsd).toBeCloseTo(want.cost, 10);
    expect(result.diagnostics).toBeUndefined();
    expect(readFileSync(join(dir, 'hello.txt'), 'utf8')).toBe('hello from the fake agent\n');
    expect(tools.some((t) => t.state === 'done' && t.summary?.includes('hello.txt'))).toBe(true);
    const [launch] = launches();
    expect(launch!.cwd).toBe(dir);
    expect(launch!.args).toEqual(expect.arrayContaining(want.editArgs));
    // Never through a shell: the prompt is one argv element (cursor) or stdin, not split or quoted.
    if (kind === 'cursor') expect(launch!.args.at(-1)).toBe(EXECUTE_PROMPT);
    else expect(launch!.args.join(' ')).not.toContain('Make the change');
    expect(launch!.env.MAESTRO_MODEL).toBe('m-strong');
  });

  it('resumes the session it is given, and a read-only call gets the read-only permission', async () => {
    const first = await provider(kind, 'clarify').run(request());
    expect(first.text).toBe('CLARIFY: Which colour?');
    const second = await provider(kind, 'clarify').run(request({ prompt: 'teal', resumeSessionId: first.sessionId!, permissionMode: 'plan' }));
    expect(second.text).toBe(`Resumed ${want.session}: wrote teal`);
    expect(second.sessionId).toBe(want.session);
    expect(readFileSync(join(dir, 'colour.txt'), 'utf8')).toBe('teal\n');
    const [, resumed] = launches();
    const at = resumed!.args.indexOf(want.resumeArgs(want.session)[0]!);
    expect(resumed!.args.slice(at, at + want.resumeArgs(want.session).length)).toEqual(want.resumeArgs(want.session));
    want.readOnly(resumed!);
  });

  it("takes a person's answer that starts with a dash (a list item, or --force) as the prompt, never as an option", async () => {
    // Resumed, the prompt is the person's answer as given: an answer written as a list item failed the run
    // (the tool read it as an unknown option), and `--force` would have been the flag that lets a read-only call write.
    const first = await provider(kind, 'clarify').run(request());
    const second = await provider(kind, 'clarify').run(request({ prompt: '- teal', resumeSessionId: first.sessionId!, permissionMode: 'plan' }));
    expect(second.text).toBe(`Resumed ${want.session}: wrote - teal`);
    await provider(kind, 'clarify').run(request({ prompt: '--force', resumeSessionId: first.sessionId!, permissionMode: 'plan' }));
    for (const [launch, answer] of [[launches()[1]!, '- teal'], [launches()[2]!, '--force']] as const) {
      // Cursor takes it as its last argument, after `--`; the others read it from standard input.
      const options = kind === 'cursor' ? launch.args.slice(0, launch.args.indexOf('--')) : launch.args;
      if (kind === 'cursor') expect(launch.args.slice(options.length)).toEqual(['--', answer]);
      else expect(launch.args).not.toContain(answer);
      want.readOnly({ ...launch, args: options });
    }
  });

  it('leaves the model to the tool for the model name "default", and takes configured permission arguments', async () => {
    await provider(kind, 'work', { permissions: { acceptEdits: ['--custom-permission'] }, extraArgs: ['--extra'] }).run(request({ model: 'default' }));
    const [launch] = launches();
    expect(launch!.args).not.toContain('--model');
    expect(launch!.args).toEqual(expect.arrayContaining(['--custom-permission', '--extra']));
  });

  it('reports lines that were not JSON and unknown event types, and still answers', async () => {
    const result = await provider(kind, 'malformed').run(request());
    expect(result.text).toBe('Wrote hello.txt.');
    expect(result.diagnostics!.malformed).toHaveLength(1);
    expect(result.diagnostics!.malformed[0]!.line).toBeGreaterThan(0);
    expect(Object.values(result.diagnostics!.unknownTypes)).toEqual([1]);
  });

  it.each([
    ['login', 'AGENT_LOGIN_REQUIRED', /is not logged in or its login expired/],
    ['ratelimit', 'AGENT_RATE_LIMITED', /was rate limited/],
    ['error', 'AGENT_FAILED', /the fake model refused/],
    ['truncated', 'AGENT_STREAM_BROKEN', /ended without a result: it exited with \d+ after \d+ line\(s\) of output; lines that were not JSON: \d+; last stderr: .+/],
  ])('the %s scenario ends the run with %s and a clear reason', async (scenario, code, message) => {
    await expect(provider(kind, scenario).run(request())).rejects.toMatchObject({ code, message: expect.stringMatching(message) });
  });

  it('a missing executable is AGENT_NOT_INSTALLED', async () => {
    await expect(provider(kind, 'work', { executable: join(dir, 'no-such-tool') }).run(request())).rejects.toMatchObject({
      code: 'AGENT_NOT_INSTALLED', message: expect.stringContaining('is not installed'),
    });
  });

  it.skipIf(unusable)('in the agent sandbox the tool runs in its own PID namespace, and a missing one is still AGENT_NOT_INSTALLED', async () => {
    const sandbox = { spec: { kind: 'bwrap' as const, hide: [], readOnly: [], writable: [] }, worktree: dir };
    const result = await provider(kind).run(request({ sandbox }));
    expect(result.text.length).toBeGreaterThan(0);
    expect(launches()[0]!.pid).toBeLessThan(10);
    await expect(provider(kind, 'work', { executable: join(dir, 'no-such-tool') }).run(request({ sandbox }))).rejects.toMatchObject({
      code: 'AGENT_NOT_INSTALLED', message: expect.stringContaining('is not installed'),
    });
  });

  it('abort ends the tool process and the run is INTERRUPTED', async () => {
    const controller = new AbortController();
    const running = provider(kind, 'hang').run(request({ signal: controller.signal }));
    await expect.poll(() => (existsSync(log) ? launches().length : 0), { timeout: budget(30_000) }).toBe(1);
    const { pid } = launches()[0]!;
    controller.abort();
    await expect(running).rejects.toMatchObject({ code: 'INTERRUPTED' });
    await expect.poll(() => pidAlive(pid), { timeout: budget(30_000) }).toBe(false);
  });
});

describe('agent CLI provider config', () => {
  it('refuses a bad provider config naming the field, and knows the four kinds by name', async () => {
    const { parseJob } = await import('../../src/executor/protocol/job.js');
    const base = {
      schemaVersion: 1, runId: 'r', taskId: 'T1', traceId: 't', kind: 'execute',
      task: { title: 'x', complexity: 'easy' }, project: { id: 'p', repoPath: '/r', worktreeRoot: '/w' },
    };
    expect(() => parseJob({ ...base, provider: { kind: 'gemini', permissions: { sometimes: ['--yolo'] } } })).toThrow(/provider\.permissions: Unrecognized key: "sometimes"/);
    expect(() => parseJob({ ...base, provider: { kind: 'codex', models: { hard: '' } } })).toThrow(/provider\.models\.hard/);
    expect(() => parseJob({ ...base, provider: { kind: 'aider' } })).toThrow(/unknown agent provider "aider" \(provider\.kind\); use scripted, command, claude, codex, gemini, cursor, opencode/);
    expect(parseJob({ ...base, provider: { kind: 'opencode', models: { medium: 'openrouter/qwen' } } }).provider).toEqual({ kind: 'opencode', models: { medium: 'openrouter/qwen' } });
  });
});
