/**
 * Two daemons on one PostgreSQL, which did what (a trial: a team running several daemons could not tell):
 * `maestro daemons` on one lists both, with where each runs and the settings that differ from its own (a
 * lease of 4 s beside 60 s, fewer runs), and the one killed with kill -9 as stale; `run show` on the other
 * daemon names the daemon that ran the run; a `maestro serve` on a shared database names itself on its
 * terminal, its start line and each status line.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { MAESTRO_VERSION } from '../../src/core/daemonSettings.js';
import { trackResource } from '../../src/lib/resources.js';
import { openDatabase } from '../../src/store/open.js';
import { createStore } from '../../src/store/store.js';
import type { DaemonList } from '../../src/api/wire/daemons.js';
import { startTestDaemon } from '../helpers/daemon.js';
import { freshPostgres, pgAvailable, removeTempDirs, tempDir } from '../helpers/db.js';
import { maestroArgs } from '../helpers/maestro.js';
import { PG_MISSING } from '../helpers/postgres.js';
import { bareRemote } from '../helpers/repo.js';
import { poll } from '../helpers/wait.js';
import { budget } from '../helpers/budget.js';
import { cli, cleanEnv } from '../cli/helpers.js';

if (!pgAvailable()) process.stderr.write(PG_MISSING);

const SCRIPT = {
  steps: [
    { match: { role: 'execute' }, actions: [{ text: 'Wrote it.' }, { write: { path: 'greet.txt', content: 'hello\n' } }] },
    { match: { role: 'review' }, actions: [{ verdict: { verdict: 'approve', findings: [] } }] },
  ],
};

describe.skipIf(!pgAvailable())('which daemon did what, on one PostgreSQL', () => {
  const open: { stop: () => Promise<unknown> }[] = [];
  afterEach(async () => {
    for (const x of open.splice(0).reverse()) await x.stop();
    removeTempDirs();
  });

  it('maestro daemons lists both with the settings that differ and the killed one as stale; run show and the terminal name the daemon', { timeout: budget(300_000) }, async () => {
    const { url, db } = await freshPostgres();
    await db.close();
    const store = createStore(openDatabase(url));
    open.push({ stop: () => store.close() });
    const root = tempDir('maestro-daemons-');
    const remote = bareRemote(root);
    const script = join(root, 'script.json');
    writeFileSync(script, JSON.stringify(SCRIPT));
    const project = await store.projects.create({ name: 'shared', repoPath: remote, config: { remote, provider: { kind: 'scripted', script } } });
    const task = await store.tasks.create({ projectId: project.id, title: 'Greet', complexity: 'easy' });

    // build-1: a real `maestro serve`, killed with kill -9 later (no warm worker left behind).
    const home1 = join(root, 'home-1');
    mkdirSync(home1);
    writeFileSync(join(home1, 'config.json'), JSON.stringify({ name: 'build-1', database: url, leaseMs: 4000, tickMs: 150, maxConcurrentRuns: 2, warmWorkers: 0, logLevel: 'warn' }));
    const child = spawn(process.execPath, [...maestroArgs(), 'serve', '--home', home1, '--port', '0', '--no-demo'], { stdio: ['ignore', 'ignore', 'pipe'], env: cleanEnv() });
    const untrack = trackResource('process', `daemon ${child.pid} (${home1})`, () => child.kill('SIGKILL'));
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    open.push({ stop: async () => { child.kill('SIGKILL'); await exited; untrack(); } });
    let terminal = '';
    child.stderr!.setEncoding('utf8').on('data', (d: string) => (terminal += d));
    await poll(() => terminal.includes('Ctrl-C stops') || child.exitCode !== null, 'build-1 to start', 240_000);
    expect(terminal).toMatch(/^maestro: daemon build-1 on http:\/\/127\.0\.0\.1:\d+ \(data in /m);

    // build-1 runs the task to the exec_review gate: its terminal says each step under its name.
    await poll(async () => (await store.tasks.get(task.id)).status === 'exec_review', 'build-1 to run the task to exec_review', 180_000);
    expect(terminal).toMatch(/^\[build-1\] \d\d:\d\d:\d\d {2}Greet +executing → reviewing/m);
    const [execute] = await store.runs.list({ taskId: task.id });

    const two = await startTestDaemon({ name: 'build-2', database: url, tickMs: 100 });
    open.push(two);
    const env = cleanEnv({ MAESTRO_HOME: two.config.home });
    const asked = ['--url', two.url];

    // run show on build-2 names build-1, which ran it.
    const shown = await cli(['run', 'show', execute!.id, ...asked], env);
    expect(shown.stderr).toBe('');
    expect(shown.stdout.split('\n').slice(0, 2)).toEqual([`run ${execute!.id} (execute) of task ${task.id}: succeeded`, '  daemon: build-1']);

    const listed = await cli(['daemons', ...asked], env);
    expect(listed.stderr).toBe('');
    const lines = listed.stdout.split('\n');
    expect(lines[0]).toMatch(/^NAME +STATE +HOST +PID +STARTED +LAST HEARD +RUNNING +VERSION +LEASE +SANDBOX +RUNS$/);
    expect(lines[1]).toMatch(new RegExp(`^build-1 +live +${hostname()} +${child.pid} +\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d +\\d+ s ago +[0-9] +${MAESTRO_VERSION} +4 s! +(bwrap|off) +2!$`));
    expect(lines[2]).toMatch(new RegExp(`^build-2 \\(this one\\) +live +${hostname()} +${process.pid} +.* s ago +0 +${MAESTRO_VERSION} +60 s +(bwrap|off) +${two.config.maxConcurrentRuns}$`));
    expect(lines[3]).toBe(`build-1 differs from build-2 (marked !): leaseMs 4 s (build-2: 60 s), tickMs 0.15 s (build-2: 0.1 s), maxConcurrentRuns 2 (build-2: ${two.config.maxConcurrentRuns}), warmWorkers 0 (build-2: ${two.config.warmWorkers}).`);

    const json = JSON.parse((await cli(['daemons', ...asked, '--json'], env)).stdout) as DaemonList;
    expect(json.self).toBe('build-2');
    expect(json.daemons.map((d) => [d.name, d.pid, d.host, d.state, d.self, d.differs])).toEqual([
      ['build-1', child.pid, hostname(), 'live', false, ['leaseMs', 'tickMs', 'maxConcurrentRuns', 'warmWorkers']],
      ['build-2', process.pid, hostname(), 'live', true, []],
    ]);
    expect(json.daemons[0]!.settings).toMatchObject({ version: MAESTRO_VERSION, leaseMs: 4000, maxConcurrentRuns: 2, warmWorkers: 0 });
    expect(json.daemons[0]!.home).toBe(home1);

    // kill -9: build-1 leaves its row; three of its 4 s leases later it is listed as stale.
    child.kill('SIGKILL');
    await exited;
    await poll(async () => {
      const r = JSON.parse((await cli(['daemons', ...asked, '--json'], env)).stdout) as DaemonList;
      return r.daemons.find((d) => d.name === 'build-1')?.state === 'stale';
    }, 'build-1 to be listed as stale', 120_000, 1000);
    const stale = await cli(['daemons', ...asked], env);
    expect(stale.stdout).toMatch(/^build-1 +stale /m);
    expect(stale.stdout).toContain('Stale: build-1 (no heartbeat for three leases: killed, or cut off from the database; its tasks go back to ready when their leases end).');
  });
});
