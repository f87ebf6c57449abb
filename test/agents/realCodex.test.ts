/**
 * The codex provider with the real Codex CLI (`@openai/codex`, a dev dependency), as a user's run starts
 * it, with only the model faked (test/helpers/responsesApi.ts, reached through a model provider in the
 * user's ~/.codex/config.toml). Its own shell tool runs for real, inside Codex's own sandbox
 * (`--sandbox workspace-write`), and so does its session store, which a resume reads. Codex's sandbox
 * keeps writes in the worktree but lets a command read the whole disk, the daemon's token too: Maestro's
 * agent sandbox around it is what hides that, and Codex's own sandbox must still work inside it.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CliAgentProvider } from '../../src/agents/cli/provider.js';
import type { AgentRequest, AgentToolEvent } from '../../src/agents/types.js';
import type { RunSandbox } from '../../src/lib/sandbox.js';
import { budget } from '../helpers/budget.js';
import { bwrapUnusable } from '../helpers/bwrap.js';
import { removeTempDirs, tempDir } from '../helpers/db.js';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { codexHome, startResponsesApi, type CodexTurn, type ResponsesApi, type ResponsesRequest } from '../helpers/responsesApi.js';
import { git, makeRepo } from '../helpers/repo.js';
import { until } from '../helpers/wait.js';

const codexBin = join(import.meta.dirname, '..', '..', 'node_modules', '.bin');

let api: ResponsesApi | undefined;
let d: TestDaemon | undefined;
afterEach(async () => {
  await d?.stop({ graceMs: 2000 });
  await api?.close();
  d = undefined;
  api = undefined;
  removeTempDirs();
});

/** A user's home (outside the temporary folder, see codexHome) with a Maestro home holding its token, a project, and a task's worktree of it. */
function machine() {
  const home = tempDir('maestro-codex-home-', '/var/tmp');
  const maestroHome = join(home, '.maestro');
  mkdirSync(maestroHome);
  writeFileSync(join(maestroHome, 'token'), 'daemon-token-secret\n');
  const repo = makeRepo({ 'README.md': '# project\n' });
  const worktree = join(tempDir('maestro-codex-wt-'), 'task');
  git(repo, 'worktree', 'add', '-q', '-b', 'task', worktree);
  return { home, maestroHome, repo, worktree };
}

async function run(m: ReturnType<typeof machine>, turns: CodexTurn[], extra: Partial<AgentRequest> = {}) {
  if (!api) {
    api = await startResponsesApi(turns);
    codexHome(m.home, api);
  }
  const provider = new CliAgentProvider({ kind: 'codex', env: { HOME: m.home, OPENAI_API_KEY: 'sk-test', PATH: `${codexBin}:${process.env.PATH}` } });
  const tokens: string[] = [];
  const tools: AgentToolEvent[] = [];
  const result = await provider.run({
    role: 'execute', taskTitle: 'greet', prompt: 'add a greeting', cwd: m.worktree, model: 'gpt-5.2-codex',
    allowedTools: [], permissionMode: 'acceptEdits', projectRoot: m.repo,
    onToken: (t) => tokens.push(t), onTool: (e) => tools.push(e), signal: new AbortController().signal, askUser: async () => '', ...extra,
  });
  return { result, tokens, tools };
}

/** Writes the greeting, then tries what an agent that goes looking would: the token, its PID, the repository. */
const look = (m: ReturnType<typeof machine>) => ({
  shell: `printf 'hello from codex\\n' > hello.txt; cat ${join(m.maestroHome, 'token')}; echo "shell pid $$"; echo more >> ${join(m.repo, 'README.md')}; echo looked`,
});

describe('the real Codex CLI against a model API', () => {
  it('runs its tool loop in its own sandbox: the file is written, the answer and the command reach Maestro, a resume continues', { timeout: budget(120_000) }, async () => {
    const m = machine();
    const first = await run(m, [look(m), { text: 'Wrote hello.txt.' }, { text: 'Still here.' }]);
    expect(readFileSync(join(m.worktree, 'hello.txt'), 'utf8')).toBe('hello from codex\n');
    const shell = api!.toolOutput(1);
    expect(shell).toContain('looked');
    // Codex's own sandbox reads anywhere: without Maestro's, the token is the agent's.
    expect(shell).toContain('daemon-token-secret');
    expect(first.result.text).toBe('Wrote hello.txt.');
    expect(first.tokens.join('')).toBe('Wrote hello.txt.');
    expect(first.tools.map((t) => [t.name, t.state, t.summary?.includes('hello from codex')])).toEqual([['command_execution', 'start', true], ['command_execution', 'done', true]]);
    expect(first.result.sessionId).toMatch(/^[0-9a-f-]{36}$/);
    expect(first.result.usage.inputTokens).toBeGreaterThan(0);
    // Every event the real Codex sent is one the parser knows.
    expect(first.result.diagnostics).toBeUndefined();

    const again = await run(m, [], { prompt: 'anything else?', resumeSessionId: first.result.sessionId! });
    expect(again.result.text).toBe('Still here.');
    // The resumed request carries the first conversation: the prompt, the command and its output.
    const resumed = JSON.stringify(api!.requests.at(-1)!.input);
    expect(resumed).toContain('add a greeting');
    expect(resumed).toContain('call_1');
    expect(resumed).toContain('anything else?');
  });
});

describe.skipIf(bwrapUnusable())('the real Codex CLI in the agent sandbox', () => {
  it('works as outside, with its own sandbox inside Maestro\'s, and its shell finds no token', { timeout: budget(120_000) }, async () => {
    const m = machine();
    const sandbox: RunSandbox = { spec: { kind: 'bwrap', hide: [m.maestroHome], readOnly: [m.repo], writable: [] }, worktree: m.worktree };
    const probe = join(m.home, '.codex', 'probe');
    const turns: CodexTurn[] = [{ shell: `${look(m).shell}; echo x > ${probe}` }, { text: 'Done.' }, { text: 'Resumed.' }];
    const first = await run(m, turns, { sandbox });
    const shell = api!.toolOutput(1);
    // Maestro's sandbox leaves ~/.codex writable (Codex keeps its sessions there); Codex's own, nested inside, does not.
    expect(shell).toMatch(/probe: Read-only file system/);
    expect(shell).toContain('looked');
    expect(shell).toMatch(/token: No such file or directory/);
    expect(shell).not.toContain('daemon-token-secret');
    expect(shell).toMatch(/README\.md: Read-only file system/);
    expect(readFileSync(join(m.repo, 'README.md'), 'utf8')).toBe('# project\n');
    expect(readFileSync(join(m.worktree, 'hello.txt'), 'utf8')).toBe('hello from codex\n');
    expect(first.result.text).toBe('Done.');

    // Codex kept its session in ~/.codex, which the sandbox leaves writable: the resume finds it.
    const again = await run(m, [], { prompt: 'go on', resumeSessionId: first.result.sessionId!, sandbox });
    expect(again.result.text).toBe('Resumed.');
    expect(JSON.stringify(api!.requests.at(-1)!.input)).toContain('call_1');
  });
});

/** What the user's side of the conversation says: Maestro's prompt, and the commands' output after it. */
const userText = (r: ResponsesRequest) => JSON.stringify(r.input.filter((i) => i.role === 'user' || i.type === 'function_call_output'));
const fenced = (value: object) => `\`\`\`json\n${JSON.stringify(value)}\n\`\`\``;

/** Maestro's three prompts, answered as a model would: a plan, a shell command then a closing line, a verdict. */
function model(maestroHome: string) {
  return (r: ResponsesRequest): CodexTurn => {
    const said = userText(r);
    if (said.includes('Break this task into subtasks')) {
      return { text: `One step.\n\n${fenced({ plan: 'Write the greeting.', subtasks: [{ title: 'Write the greeting', complexity: 'easy', ownedFiles: ['hello.txt'] }] })}` };
    }
    if (said.includes('review, read-only)')) return { text: fenced({ verdict: 'approve', summary: 'Fine.', findings: [] }) };
    if (!said.includes('function_call_output')) return { shell: `printf 'hello from codex\\n' > hello.txt; cat ${join(maestroHome, 'token')}; echo shell done` };
    return { text: 'Wrote hello.txt.' };
  };
}

describe.skipIf(bwrapUnusable())('the real Codex CLI as the agent of a daemon', () => {
  it('plans, executes, reviews and merges a task, in the sandbox: the shell it ran found no token', { timeout: budget(300_000) }, async () => {
    const home = tempDir('maestro-home-');
    api = await startResponsesApi(model(home));
    const userHome = tempDir('maestro-codex-user-', '/var/tmp');
    codexHome(userHome, api);
    d = await startTestDaemon({ home, tickMs: 100 }, { workerEnv: { HOME: userHome, OPENAI_API_KEY: 'sk-test', PATH: `${codexBin}:${process.env.PATH}` } });
    expect(d.config.agentSandbox).not.toBeNull();
    const repo = makeRepo();
    const project = await d.store.projects.create({ name: 'greet', repoPath: repo, config: { provider: { kind: 'codex' }, autoApproveAfterMs: 0 } });
    const task = await d.store.tasks.create({ projectId: project.id, title: 'Greet the user', complexity: 'medium' });
    d.orchestrator.kick();

    const done = await until(d.bus, async () => {
      const t = await d!.store.tasks.get(task.id);
      if (t.status === 'needs_attention' || t.status === 'cancelled') throw new Error(`task is ${t.status}: ${t.lastRunError}`);
      return t.status === 'done' ? t : null;
    }, 'the task to be done', 240_000);
    expect(done.status).toBe('done');
    expect(readFileSync(join(repo, 'hello.txt'), 'utf8')).toBe('hello from codex\n');
    const runs = await d.store.runs.list({ taskId: task.id });
    expect(runs.map((r) => [r.kind, r.status])).toEqual([['plan', 'succeeded'], ['execute', 'succeeded'], ['review', 'succeeded']]);
    for (const run of runs) expect(run.inputTokens).toBeGreaterThan(0);
    // The command Codex ran is a phase on the board's live stream.
    const phases = (await d.store.events.list({ taskId: task.id, type: 'run.phase', limit: 500 })).events.map((e) => e.payload as { stage: string; state: string; detail?: { summary?: string } });
    expect(phases.some((p) => p.stage === 'tool:command_execution' && p.state === 'done' && p.detail?.summary?.includes('hello.txt'))).toBe(true);

    const shell = api.requests.map(userText).find((t) => t.includes('shell done'))!;
    expect(shell).toMatch(/token: No such file or directory/);
    expect(shell).not.toContain(readFileSync(join(home, 'token'), 'utf8').trim());
  });
});
