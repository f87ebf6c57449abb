/**
 * The example agent of docs/agents.md (examples/agents/file-agent.mjs) behind
 * the `command` provider, through a real daemon and real workers: one task goes
 * from create to merged; another has no instruction, so the agent asks its
 * clarifying question, the answer comes through the API, and it goes on to merge;
 * a third adds a TODO, so the code review rejects it with the file and line.
 */
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Task } from '../../src/core/types.js';
import { removeTempDirs } from '../helpers/db.js';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { git, makeRepo } from '../helpers/repo.js';
import { until } from '../helpers/wait.js';
import { budget } from '../helpers/budget.js';

const AGENT = resolve(import.meta.dirname, '../../examples/agents/file-agent.mjs');

describe('the example command agent', () => {
  let daemon: TestDaemon | null = null;
  afterEach(async () => {
    await daemon?.stop({ graceMs: 2000 });
    daemon = null;
    removeTempDirs();
  });

  it('runs tasks from create to merged, asks a clarifying question, and reviews with file and line', async () => {
    const repo = makeRepo();
    daemon = await startTestDaemon({ tickMs: 100 });
    const d = daemon;
    const call = async (method: 'GET' | 'POST', url: string, payload?: unknown) => {
      const res = await d.app.inject({ method, url, ...(payload === undefined ? {} : { payload: payload as object }) });
      return { status: res.statusCode, body: JSON.parse(res.body) };
    };
    const added = await call('POST', '/api/projects', { name: 'ex', repoPath: repo, config: { provider: { kind: 'command', command: [process.execPath, AGENT] } } });
    expect(added.status).toBe(201);
    const create = async (title: string, spec: string | null) => (await call('POST', '/api/tasks', { projectId: added.body.project.id, title, spec, complexity: 'easy' })).body.task as Task;
    const status = async (id: string) => (await d.store.tasks.get(id)).status;
    const reach = (id: string, want: string) => until(d.bus, async () => {
      const t = await d.store.tasks.get(id);
      if (t.status === 'needs_attention' && want !== 'needs_attention') throw new Error(`${t.title} needs attention: ${t.lastRunError}`);
      return t.status === want ? t : null;
    }, `${id} ${want}`, 240_000);

    const greet = await create('Add a greeting file', 'Create file `docs/hello.txt` containing `hello from the example agent`.');
    const ask = await create('Add a notes file', null);
    const todo = await create('Add a todo', 'Create file `todo.txt` containing `TODO write this`.');
    d.orchestrator.kick();

    await reach(greet.id, 'exec_review');
    const diff = (await call('GET', `/api/tasks/${greet.id}/diff`)).body;
    expect(diff.files.map((f: { path: string; status: string }) => `${f.status} ${f.path}`)).toEqual(['added docs/hello.txt']);
    expect((await call('GET', `/api/tasks/${greet.id}/findings`)).body.verdicts.map((v: { verdict: string }) => v.verdict)).toEqual(['approve', 'approve']);
    expect((await call('POST', `/api/tasks/${greet.id}/approve`, {})).status).toBe(200);

    // No instruction: the agent ends its answer with CLARIFY: and the task waits for a person.
    await reach(ask.id, 'awaiting_input');
    expect((await call('POST', `/api/tasks/${ask.id}/reply`, { message: 'create file `notes.md` containing `first note`' })).status).toBe(202);
    await reach(ask.id, 'exec_review');
    expect((await call('POST', `/api/tasks/${ask.id}/approve`, {})).status).toBe(200);

    // A TODO: the code review rejects with the line, three rounds, then a person must look.
    await reach(todo.id, 'needs_attention');
    const findings = (await call('GET', `/api/tasks/${todo.id}/findings`)).body.findings;
    expect(findings[0]).toMatchObject({ reviewer: 'code', file: 'todo.txt', line: 1, message: 'a TODO left in the change' });

    d.orchestrator.kick();
    await reach(greet.id, 'done');
    await reach(ask.id, 'done');
    expect(readFileSync(join(repo, 'docs/hello.txt'), 'utf8')).toBe('hello from the example agent\n');
    expect(readFileSync(join(repo, 'notes.md'), 'utf8')).toBe('first note\n');
    expect(git(repo, 'log', '--format=%s', '-n', '4')).toContain(`Merge maestro/`);
    expect(await status(todo.id)).toBe('needs_attention');
  }, budget(600_000));
});
