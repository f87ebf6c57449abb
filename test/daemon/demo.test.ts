/**
 * The offline demo runs to done unattended: a plan of three dependent
 * subtasks, a clarifying question answered, a review rejection fixed in the
 * second round, and a real merge conflict resolved by a conflict run.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { terminalLine } from '../../src/cli/commands/serve.js';
import { DEMO_TASK_TITLE } from '../../src/demo/demo.js';
import { removeTempDirs } from '../helpers/db.js';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { git } from '../helpers/repo.js';
import { until } from '../helpers/wait.js';
import { budget } from '../helpers/budget.js';

describe('offline demo', () => {
  let daemon: TestDaemon | null = null;
  afterEach(async () => {
    await daemon?.stop({ graceMs: 2000 });
    daemon = null;
    removeTempDirs();
  });

  it('runs the whole loop to done on its own', { timeout: budget(240_000) }, async () => {
    daemon = await startTestDaemon({ tickMs: 100, maxConcurrentRunsPerProject: 3 }, { demo: { autoApproveAfterMs: 200, autoReplyAfterMs: 200 } });
    const { store, bus } = daemon;
    const [project] = await store.projects.list();
    expect(project!.name).toBe('demo');
    const [parent] = await store.tasks.list({ projectId: project!.id, parentId: null });
    expect(parent!.title).toBe(DEMO_TASK_TITLE);

    await until(bus, async () => {
      const t = await store.tasks.get(parent!.id);
      if (t.status === 'needs_attention') throw new Error(`parent needs attention: ${t.lastRunError}`);
      const kids = await store.tasks.list({ parentId: parent!.id });
      const stuck = kids.find((k) => k.status === 'needs_attention');
      if (stuck) throw new Error(`${stuck.title} needs attention: ${stuck.lastRunError}`);
      return t.status === 'done';
    }, 'the demo parent task to be done', 150_000);

    const children = await store.tasks.list({ parentId: parent!.id });
    expect(children.map((c) => [c.title, c.status]).sort()).toEqual([
      ['Add the command line', 'done'],
      ['Define the greeting', 'done'],
      ['Document the greeting', 'done'],
    ]);
    const cli = children.find((c) => c.title === 'Add the command line')!;
    const doc = children.find((c) => c.title === 'Document the greeting')!;
    const define = children.find((c) => c.title === 'Define the greeting')!;
    expect(cli.deps).toEqual([define.id]);
    expect(doc.deps).toEqual([define.id]);

    // The question was asked and answered.
    const clarify = (await store.events.list({ taskId: define.id, type: 'run.clarify' })).events;
    expect(clarify[0]?.payload.question).toBe('Which greeting should greet(name) use?');
    // Review rejected the command line once; the second round passed.
    const cliRuns = await store.runs.list({ taskId: cli.id });
    expect(cliRuns.filter((r) => r.kind === 'execute').length).toBeGreaterThanOrEqual(2);
    // A conflict run resolved README.md.
    const conflictRuns = [...cliRuns, ...(await store.runs.list({ taskId: doc.id }))].filter((r) => r.kind === 'conflict');
    expect(conflictRuns.some((r) => r.status === 'succeeded')).toBe(true);
    // The terminal of `maestro serve` says so, not only merging → done: the conflict run, and the merge conflict
    // when the merge found it (on a busy machine the execute's sync with main may find it first).
    const conflicted = conflictRuns[0]!.taskId;
    const events = (await store.events.list({ taskId: conflicted, limit: 1000 })).events;
    const lines = events.map((e) => terminalLine(e, 'T')).filter((l): l is string => l !== null);
    expect(lines.some((l) => /T\s+conflict run started$/.test(l))).toBe(true);
    const atMerge = events.filter((e) => e.type === 'merge.conflict').length;
    expect(lines.filter((l) => /T\s+merge conflict on maestro\/\S+: a conflict run will resolve it$/.test(l))).toHaveLength(atMerge);

    const repo = project!.repoPath;
    const readme = readFileSync(join(repo, 'README.md'), 'utf8');
    expect(readme).toContain('Usage: node src/cli.js <name>');
    expect(readme).toContain('greet(name) returns the greeting');
    expect(readFileSync(join(repo, 'src/greet.js'), 'utf8')).toContain('Hello, {name}! Welcome to Maestro.');
    expect(readFileSync(join(repo, 'test/cli.test.js'), 'utf8')).toContain("greet('Ada')");
    expect(git(repo, 'status', '--porcelain', '--untracked-files=no')).toBe('');
    expect((await store.db.all(`SELECT task_id FROM merges`)).length).toBe(3);
  });
});
