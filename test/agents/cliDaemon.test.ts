/**
 * Each agent CLI provider through the whole daemon: a real daemon, a real git
 * repository, real worker processes, and a fake codex / gemini / cursor-agent
 * / opencode first on the workers' PATH (the provider config names only the
 * kind, so the provider finds the tool the way it finds the real one). A
 * medium task is planned, executed, reviewed and merged; a clarifying
 * question waits for the human and resumes the tool's session; a lost login
 * ends in needs_attention with the reason.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { CliToolKind } from '../../src/agents/cli/tools.js';
import { removeTempDirs, tempDir } from '../helpers/db.js';
import { startTestDaemon, taskReaches, type TestDaemon } from '../helpers/daemon.js';
import { makeRepo } from '../helpers/repo.js';
import { until } from '../helpers/wait.js';
import { FAKES, fakeBin } from './fakes/bin.js';

const TASK_BUDGET_MS = 180_000;

let daemon: TestDaemon | null = null;
afterEach(async () => {
  await daemon?.stop({ graceMs: 2000 });
  daemon = null;
  removeTempDirs();
});

async function start(scenario: string) {
  const root = tempDir('maestro-fake-tools-');
  const log = join(root, 'launches.ndjson');
  const bin = fakeBin(root);
  // The fakes log their launches beside them: in the agent sandbox (the default where bwrap works) that folder is made writable.
  daemon = await startTestDaemon({ tickMs: 100, agentSandbox: { kind: 'bwrap', required: false, hide: [], writable: [root] } }, { workerEnv: { HOME: join(root, 'home'), PATH: `${bin}:${process.env.PATH}`, FAKE_AGENT_SCENARIO: scenario, FAKE_AGENT_LOG: log } });
  const launches = () => readFileSync(log, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { args: string[]; env: Record<string, string> });
  return { d: daemon, launches };
}

describe.each(Object.keys(FAKES) as CliToolKind[])('the %s provider through the daemon', (kind) => {
  it('plans, executes, reviews and merges a task, with tool phases, usage and the tiers\' models', async () => {
    const { d, launches } = await start('work');
    const repo = makeRepo();
    const project = await d.store.projects.create({ name: kind, repoPath: repo, config: { provider: { kind, models: { hard: `${kind}-strong`, medium: `${kind}-mid` } }, autoApproveAfterMs: 0 } });
    const task = await d.store.tasks.create({ projectId: project.id, title: 'Greet the user', complexity: 'medium' });
    d.orchestrator.kick();

    await taskReaches(d, task.id, 'done', TASK_BUDGET_MS);
    expect(readFileSync(join(repo, 'hello.txt'), 'utf8')).toBe('hello from the fake agent\n');
    const runs = await d.store.runs.list({ taskId: task.id });
    expect(runs.map((r) => [r.kind, r.status])).toEqual([['plan', 'succeeded'], ['execute', 'succeeded'], ['review', 'succeeded']]);
    for (const run of runs) expect(run.inputTokens).toBeGreaterThan(0);
    if (kind === 'opencode') expect(runs.every((r) => r.costUsd > 0)).toBe(true);

    // The tool calls the agent made are phases on the board's live stream and in the trace.
    const phases = (await d.store.events.list({ taskId: task.id, type: 'run.phase', limit: 500 })).events.map((e) => e.payload as { stage: string; state: string; detail?: { summary?: string } });
    expect(phases.some((p) => p.stage.startsWith('tool:') && p.state === 'done' && p.detail?.summary?.includes('hello.txt'))).toBe(true);
    // Planning and execution on the medium tier, both reviews on the strongest.
    const models = launches().map((l) => l.env.MAESTRO_MODEL);
    expect(models.filter((m) => m === `${kind}-mid`)).toHaveLength(2);
    expect(models.filter((m) => m === `${kind}-strong`)).toHaveLength(2);
  }, TASK_BUDGET_MS + 30_000);
});

describe('agent CLIs in the daemon: questions and failures', () => {
  it('a clarifying question waits for the human and the reply resumes the tool\'s session (codex)', async () => {
    const { d, launches } = await start('clarify');
    const repo = makeRepo();
    const project = await d.store.projects.create({ name: 'ask', repoPath: repo, config: { provider: { kind: 'codex' }, autoApproveAfterMs: 0 } });
    const task = await d.store.tasks.create({ projectId: project.id, title: 'Paint it', complexity: 'easy', ownedFiles: ['colour.txt'] });
    d.orchestrator.kick();

    await taskReaches(d, task.id, 'awaiting_input', TASK_BUDGET_MS);
    const answer = await d.app.inject({ method: 'POST', url: `/api/tasks/${task.id}/reply`, payload: { message: 'teal' } });
    expect(answer.statusCode).toBe(202);
    await taskReaches(d, task.id, 'done', TASK_BUDGET_MS);
    expect(readFileSync(join(repo, 'colour.txt'), 'utf8')).toBe('teal\n');
    const resumed = launches().find((l) => l.args.includes('resume'));
    expect(resumed?.args).toEqual(expect.arrayContaining(['resume', 'codex-thread-1', '-']));
  }, TASK_BUDGET_MS + 30_000);

  it('an expired login ends the run in needs_attention with the reason, without trying a weaker model (gemini)', async () => {
    const { d, launches } = await start('login');
    const repo = makeRepo();
    const project = await d.store.projects.create({ name: 'nologin', repoPath: repo, config: { provider: { kind: 'gemini' } } });
    const task = await d.store.tasks.create({ projectId: project.id, title: 'Greet', complexity: 'easy', ownedFiles: ['hello.txt'] });
    d.orchestrator.kick();

    const stuck = await until(d.bus, async () => {
      const t = await d.store.tasks.get(task.id);
      return t.status === 'needs_attention' ? t : null;
    }, 'needs_attention', TASK_BUDGET_MS);
    expect(stuck.lastRunError).toMatch(/Gemini CLI is not logged in or its login expired/);
    expect(launches()).toHaveLength(1);
    expect(existsSync(join(repo, 'hello.txt'))).toBe(false);
  }, TASK_BUDGET_MS + 30_000);
});
