/**
 * On a shared remote, whatever another daemon does with a run's outcome (review the commit it names, merge the
 * task once a conflict run has resolved it) needs that commit on the remote. So the task branch is pushed before
 * the outcome is committed: while the push is under way the task has not moved on, and once it has, the remote
 * holds the commit its result names.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { removeTempDirs, tempDir } from '../helpers/db.js';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { bareRemote, git } from '../helpers/repo.js';
import { poll, until } from '../helpers/wait.js';

const SCRIPT = fileURLToPath(new URL('./fixtures/plan-one.yaml', import.meta.url));

/** A pre-receive hook that holds every push until `release` exists; `started` says one is waiting. */
function holdPushes(remote: string): { started: string; release: string } {
  const dir = tempDir('maestro-hold-');
  const started = join(dir, 'started');
  const release = join(dir, 'release');
  writeFileSync(join(remote, 'hooks', 'pre-receive'), `#!/bin/sh\ntouch '${started}'\nwhile [ ! -e '${release}' ]; do sleep 0.05; done\n`, { mode: 0o755 });
  return { started, release };
}

describe('the task branch of a run on a shared remote', () => {
  let d: TestDaemon | null = null;
  let release: string | null = null;
  afterEach(async () => {
    if (release) writeFileSync(release, ''); // a failed test leaves no push held
    await d?.stop({ graceMs: 2000 });
    d = null;
    removeTempDirs();
  });

  it('is on the remote before the run’s outcome is committed', async () => {
    const remote = bareRemote(tempDir('maestro-remote-'));
    const hold = holdPushes(remote);
    release = hold.release;
    d = await startTestDaemon({ tickMs: 100 });
    const { store, bus } = d;
    const p = await store.projects.create({ name: 'web', repoPath: remote, config: { remote, provider: { kind: 'scripted', script: SCRIPT }, autoApproveAfterMs: 0 } });
    const t = await store.tasks.create({ projectId: p.id, title: 'Do the thing', complexity: 'easy' });
    d.orchestrator.kick();

    await poll(() => existsSync(hold.started), 'the push of the execute run’s branch', 60_000);
    const [run] = await store.runs.list({ taskId: t.id });
    expect(run).toMatchObject({ kind: 'execute', status: 'running' });
    expect((await store.tasks.get(t.id)).status).toBe('executing');

    writeFileSync(hold.release, '');
    await until(bus, async () => (await store.tasks.get(t.id)).status !== 'executing', 'the execute run’s outcome', 60_000);
    const { result } = await store.tasks.get(t.id);
    const branch = (result as { branch: string }).branch;
    expect(git(remote, 'rev-parse', branch)).toBe((result as { commitSha: string }).commitSha);
    await until(bus, async () => (await store.tasks.get(t.id)).status === 'done', 'the task done', 120_000);
  });
});
