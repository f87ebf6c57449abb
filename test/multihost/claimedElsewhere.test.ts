/**
 * Two daemons on one PostgreSQL: `maestro task show` on the daemon that does not run a task names the one that does,
 * and once that one has stopped, says so and when the task is taken over. Before, the other daemon showed
 * "executing" and a running execute run for a whole lease after the daemon running it stopped, with no word of why
 * nothing moved (a trial: SIGTERM of one daemon mid-run, `task show` on the other).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/store/open.js';
import { createStore } from '../../src/store/store.js';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { freshPostgres, pgAvailable, removeTempDirs, tempDir } from '../helpers/db.js';
import { PG_MISSING } from '../helpers/postgres.js';
import { bareRemote } from '../helpers/repo.js';
import { poll } from '../helpers/wait.js';
import { budget } from '../helpers/budget.js';
import { cli, cleanEnv, startCli } from '../cli/helpers.js';

if (!pgAvailable()) process.stderr.write(PG_MISSING);

describe.skipIf(!pgAvailable())('a task another daemon runs', () => {
  const open: { stop: () => Promise<unknown> }[] = [];
  afterEach(async () => {
    for (const x of open.splice(0).reverse()) await x.stop();
    removeTempDirs();
  });

  it('task show on the other daemon names the one running it, and says when it has stopped and when the task is taken over', { timeout: budget(120_000) }, async () => {
    const { url, db } = await freshPostgres();
    await db.close();
    const store = createStore(openDatabase(url));
    open.push({ stop: () => store.close() });
    const root = tempDir('maestro-claimed-');
    const remote = bareRemote(root);
    const script = join(root, 'script.yaml');
    writeFileSync(script, 'steps:\n  - match: { role: execute }\n    actions:\n      - hang: true\n');
    const project = await store.projects.create({ name: 'shared', repoPath: remote, config: { remote, provider: { kind: 'scripted', script } } });
    const task = await store.tasks.create({ projectId: project.id, title: 'held', complexity: 'easy' });

    const one = await startTestDaemon({ name: 'build-1', database: url, tickMs: 100 });
    open.push(one);
    await poll(async () => {
      const t = await store.tasks.get(task.id);
      return t.status === 'executing' && t.claimedBy === 'build-1' && (await store.runs.list({ taskId: task.id })).some((r) => r.status === 'running');
    }, 'build-1 runs the task', 60_000);
    // The default lease (60 s): build-2 takes nothing over while the test looks.
    const two: TestDaemon = await startTestDaemon({ name: 'build-2', database: url, tickMs: 100 });
    open.push(two);
    const show = async (d: TestDaemon) => {
      const r = await cli(['task', 'show', task.id, '--url', d.url], cleanEnv({ MAESTRO_HOME: d.config.home }));
      expect(r.stderr).toBe('');
      return r.stdout;
    };

    const onTwo = await show(two);
    expect(onTwo).toMatch(/^It runs on daemon build-1 \(last heard from \d+ s ago\)\.$/m);
    expect(onTwo).toContain('status: executing');
    // The daemon running it says nothing of the kind.
    expect(await show(one)).not.toContain('It runs on daemon');
    // Followed on build-2: the stream of build-1's run, which stops without a word when build-1 does.
    const follow = startCli(['task', 'logs', task.id, '--follow', '--url', two.url], cleanEnv({ MAESTRO_HOME: two.config.home }));
    let followed = '';
    follow.stdout!.on('data', (d: Buffer) => (followed += d.toString()));
    follow.stderr!.on('data', (d: Buffer) => (followed += d.toString()));
    open.push({ stop: async () => void follow.kill() });
    await poll(() => followed.includes('agent: start'), `the run's stream on build-2 (so far: ${followed})`, 60_000);

    // Stopped with its stage cut off (a second Ctrl-C, or a SIGTERM whose grace ran out): its claim stays, its name goes.
    await one.stop({ graceMs: 0 });
    open.splice(open.indexOf(one), 1);
    expect((await store.tasks.get(task.id)).claimedBy).toBe('build-1');
    const stopped = await show(two);
    expect(stopped).toMatch(
      /^It runs on daemon build-1, which has stopped\. Its lease on the task ends in \d+ s; then a running daemon takes it back to ready and runs it again, from the branch build-1 last pushed \(a restart of build-1 before then resumes the run\)\.$/m,
    );
    await poll(() => /══ It runs on daemon build-1, which has stopped\. Its lease on the task ends in \d+ s; then a running daemon takes it back to ready .* Still following\. ══/.test(followed), `the follower told build-1 stopped (so far: ${followed})`, 60_000);
    const json = JSON.parse((await cli(['task', 'show', task.id, '--url', two.url, '--json'], cleanEnv({ MAESTRO_HOME: two.config.home }))).stdout) as { claimedElsewhere: { daemon: string; lastHeardMsAgo: number | null; leaseEndsInMs: number } };
    expect(json.claimedElsewhere).toMatchObject({ daemon: 'build-1', lastHeardMsAgo: null });
    expect(json.claimedElsewhere.leaseEndsInMs).toBeGreaterThan(0);
    // Said once, though the follower looks at the task every 1.5 s meanwhile.
    expect(followed.match(/which has stopped/g)).toHaveLength(1);
  });
});
