/**
 * Hooks in the running daemon: a project module hook rewrites the plan, a
 * project shell hook vetoes the merge (the task needs attention with the
 * hook's reason and main is untouched), and a project hook wins over the
 * global one.
 */
import { chmodSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { removeTempDirs, tempDir } from '../helpers/db.js';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { bareRemote, makeRepo } from '../helpers/repo.js';
import { poll, until } from '../helpers/wait.js';

const SCRIPT = fileURLToPath(new URL('./fixtures/plan-one.yaml', import.meta.url));

describe('hooks in the daemon', () => {
  let d: TestDaemon | null = null;
  afterEach(async () => {
    await d?.stop({ graceMs: 2000 });
    d = null;
    removeTempDirs();
  });

  it('after:planner:output rewrites the plan; before:merge vetoes the merge; project over global', async () => {
    const repo = makeRepo();
    mkdirSync(join(repo, '.maestro', 'hooks'), { recursive: true });
    writeFileSync(join(repo, '.maestro', 'hooks.mjs'), "export default { 'after:planner:output': (task, plan) => plan + '\\n\\nChecked by the project hook.' };\n");
    writeFileSync(join(repo, '.maestro', 'hooks', 'before-merge.sh'), '#!/bin/sh\necho "release freeze until Monday"\nexit 1\n');
    chmodSync(join(repo, '.maestro', 'hooks', 'before-merge.sh'), 0o755);
    const home = tempDir('maestro-home-');
    // A global hook that would allow the merge: the project's hook must win.
    mkdirSync(join(home, 'hooks'), { recursive: true });
    writeFileSync(join(home, 'hooks', 'before-merge.sh'), '#!/bin/sh\nexit 0\n');
    chmodSync(join(home, 'hooks', 'before-merge.sh'), 0o755);

    d = await startTestDaemon({ home, tickMs: 100 });
    const { store, bus } = d;
    const p = await store.projects.create({ name: 'hooked', repoPath: repo, config: { provider: { kind: 'scripted', script: SCRIPT }, autoApproveAfterMs: 0 } });
    const t = await store.tasks.create({ projectId: p.id, title: 'Plan then merge', complexity: 'medium' });
    d.orchestrator.kick();

    const stuck = await until(bus, async () => {
      const x = await store.tasks.get(t.id);
      return x.status === 'needs_attention' ? x : x.status === 'done' ? Promise.reject(new Error('merged despite the veto')) : null;
    }, 'the merge veto', 90_000);
    expect(stuck.plan).toContain('Checked by the project hook.');
    expect(stuck.lastRunError).toContain('release freeze until Monday');
    const cancels = (await store.events.list({ taskId: t.id, type: 'hook.cancelled' })).events;
    expect(cancels.map((e) => e.payload)).toEqual([expect.objectContaining({ hook: 'before:merge', reason: expect.stringContaining('release freeze') })]);
    expect(existsSync(join(repo, 'thing.txt'))).toBe(false);
  });

  it('on a shared remote the project hooks are main\'s, read from the daemon\'s clone: before:task:claim holds the task', async () => {
    // The project is registered by its bare remote, which has no work tree and so no .maestro/ of its own.
    const remote = bareRemote(tempDir('maestro-remote-'), { 'README.md': '# shared\n', '.maestro/hooks/before-task-claim.sh': '#!/bin/sh\necho "nothing is claimed during the audit"\nexit 1\n' });
    d = await startTestDaemon({ tickMs: 100 });
    const { store } = d;
    const p = await store.projects.create({ name: 'shared', repoPath: remote, config: { remote, provider: { kind: 'scripted', script: SCRIPT } } });
    const t = await store.tasks.create({ projectId: p.id, title: 'Held by the audit', complexity: 'medium' });
    d.orchestrator.kick();
    const cancels = await poll(async () => {
      const found = (await store.events.list({ taskId: t.id, type: 'hook.cancelled' })).events;
      return found.length ? found : null;
    }, 'the claim veto from the remote\'s hook', 60_000);
    expect(cancels[0]!.payload).toMatchObject({ hook: 'before:task:claim', reason: expect.stringContaining('during the audit') });
    expect(await store.tasks.get(t.id)).toMatchObject({ status: 'ready', claimedBy: null });
    expect(await store.runs.list({ taskId: t.id })).toEqual([]);
  });
});
