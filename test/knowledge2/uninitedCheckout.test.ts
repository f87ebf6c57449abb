/**
 * A repository Maestro was never init'ed in (maestro-flow's `.workflow/` committed, no Maestro lines in its
 * .gitignore), registered and run: what Maestro keeps in the person's checkout is this machine's state (the search
 * index and its WAL files, locks), and `git status` there stays clean. It listed `.workflow/.maestro-index.db*`
 * as untracked (a trial), one `git add -A` from being committed; so did a task's session an earlier version left.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { budget } from '../helpers/budget.js';
import { removeTempDirs, tempDir } from '../helpers/db.js';
import { daemonRequest, startTestDaemon, taskReaches, type TestDaemon } from '../helpers/daemon.js';
import { gitRepo } from '../cli/helpers.js';

afterEach(() => removeTempDirs());

const SCRIPT = {
  steps: [
    { match: { role: 'execute' }, actions: [{ write: { path: 'notes.txt', content: 'done\n' } }] },
    { match: { role: 'review' }, actions: [{ verdict: { verdict: 'approve', findings: [] } }] },
  ],
};

const status = (repo: string) => execFileSync('git', ['status', '--porcelain', '--untracked-files=all', '--ignored=no'], { cwd: repo, encoding: 'utf8' });

describe('a checkout Maestro was not init\'ed in', { timeout: budget(300_000) }, () => {
  let d: TestDaemon | null = null;
  afterEach(async () => {
    await d?.stop({ graceMs: 2000 });
    d = null;
  });

  it('keeps git status clean through a task: the index and the other machine state are ignored in the repository\'s own info/exclude', async () => {
    const repo = gitRepo({ 'README.md': '# r\n', '.workflow/specs/learnings.md': '<spec-entry category="learning" keywords="otter" date="2026-01-01" title="Otters">\notter\n</spec-entry>\n' });
    // A task's session an earlier version left without its own .gitignore.
    mkdirSync(join(repo, '.workflow', 'sessions', 'task-t-old'), { recursive: true });
    writeFileSync(join(repo, '.workflow', 'sessions', 'task-t-old', 'session.json'), '{}\n');
    const script = join(tempDir('maestro-script-'), 'script.json');
    writeFileSync(script, JSON.stringify(SCRIPT));
    d = await startTestDaemon({ tickMs: 100 });
    const project = await d.store.projects.create({ name: 'flow', repoPath: repo, config: { provider: { kind: 'scripted', script } } });
    const found = await daemonRequest(d, 'GET', `/api/knowledge/search?projectId=${project.id}&q=otter&fresh=true`);
    expect(found.status).toBe(200);
    const task = await d.store.tasks.create({ projectId: project.id, title: 'Write notes', complexity: 'easy' });
    d.orchestrator.kick();
    await taskReaches(d, task.id, 'exec_review', 120_000);
    expect((await daemonRequest(d, 'POST', `/api/tasks/${task.id}/approve`, { who: 'ada' })).status).toBe(200);
    d.orchestrator.kick();
    await taskReaches(d, task.id, 'done', 120_000);
    expect(existsSync(join(repo, '.workflow', '.maestro-index.db'))).toBe(true);
    expect(status(repo)).toBe('');
    expect(readFileSync(join(repo, '.git', 'info', 'exclude'), 'utf8')).toContain('.workflow/.maestro-index.db');
  });
});
