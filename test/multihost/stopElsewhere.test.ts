/**
 * `maestro stop --url` of a daemon on another host (its own host name: a UTS namespace made with bwrap), on a shared
 * PostgreSQL, while its worker is mid-stage: stop returns only once that daemon has said its hand-over is done, its
 * finished run applied and its row taken off the database. Before, the daemon closed its port as its stop began, and
 * stop (which cannot watch another host's process) returned at once, while the daemon still held the task.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { trackResource } from '../../src/lib/resources.js';
import { openDatabase } from '../../src/store/open.js';
import { createStore } from '../../src/store/store.js';
import { freshPostgres, pgAvailable, removeTempDirs, tempDir } from '../helpers/db.js';
import { maestroArgs } from '../helpers/maestro.js';
import { PG_MISSING } from '../helpers/postgres.js';
import { bareRemote } from '../helpers/repo.js';
import { poll } from '../helpers/wait.js';
import { budget } from '../helpers/budget.js';
import { cli, cleanEnv } from '../cli/helpers.js';

if (!pgAvailable()) process.stderr.write(PG_MISSING);
const OTHER_HOST = 'far-host';
const bwrapHosts = spawnSync('bwrap', ['--unshare-uts', '--hostname', OTHER_HOST, '--dev-bind', '/', '/', 'hostname'], { encoding: 'utf8' }).stdout?.trim() === OTHER_HOST;
if (!bwrapHosts) process.stderr.write('stopElsewhere.test.ts: SKIPPED: bwrap cannot give a process another host name here (bwrap --unshare-uts).\n');

// The execute stage takes a while: the stop finds it mid-stage, and it finishes within the 30 s grace.
const SCRIPT = {
  steps: [
    { match: { role: 'execute' }, actions: [{ text: 'Working.' }, { wait: 6000 }, { write: { path: 'greet.txt', content: 'hello\n' } }] },
    { match: { role: 'review' }, actions: [{ verdict: { verdict: 'approve', findings: [] } }] },
  ],
};

describe.skipIf(!pgAvailable() || !bwrapHosts)('maestro stop of a daemon on another host', () => {
  const open: { stop: () => Promise<unknown> }[] = [];
  afterEach(async () => {
    for (const x of open.splice(0).reverse()) await x.stop();
    removeTempDirs();
  });

  it('returns once the daemon says its hand-over is done, not when its port closes', { timeout: budget(300_000) }, async () => {
    const { url, db } = await freshPostgres();
    await db.close();
    const store = createStore(openDatabase(url));
    open.push({ stop: () => store.close() });
    const root = tempDir('maestro-stop-far-');
    const remote = bareRemote(root);
    const script = join(root, 'script.json');
    writeFileSync(script, JSON.stringify(SCRIPT));
    const project = await store.projects.create({ name: 'shared', repoPath: remote, config: { remote, provider: { kind: 'scripted', script } } });
    const task = await store.tasks.create({ projectId: project.id, title: 'Greet', complexity: 'easy' });

    const home = join(root, 'home');
    mkdirSync(home);
    writeFileSync(join(home, 'config.json'), JSON.stringify({ name: 'far-1', database: url, tickMs: 150, warmWorkers: 0, agentSandbox: 'off', logLevel: 'warn' }));
    const child = spawn('bwrap', ['--unshare-uts', '--hostname', OTHER_HOST, '--die-with-parent', '--dev-bind', '/', '/', process.execPath, ...maestroArgs(), 'serve', '--home', home, '--port', '0', '--no-demo'], { stdio: ['ignore', 'ignore', 'pipe'], env: cleanEnv() });
    const untrack = trackResource('process', `daemon ${child.pid} (${home})`, () => child.kill('SIGKILL'));
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    open.push({ stop: async () => { child.kill('SIGKILL'); await exited; untrack(); } });
    let terminal = '';
    child.stderr!.setEncoding('utf8').on('data', (d: string) => (terminal += d));
    await poll(() => terminal.includes('Ctrl-C stops') || child.exitCode !== null, 'far-1 to start', 240_000);
    const daemonUrl = /^maestro: daemon far-1 on (http:\/\/127\.0\.0\.1:\d+) /m.exec(terminal)?.[1];
    expect(daemonUrl, terminal).toBeDefined();

    // Its worker is in the execute run's agent stage (the 6 s wait).
    const phases = async () => (await store.events.list({ taskId: task.id, type: 'run.phase' })).events.map((e) => e.payload as { kind: string; stage: string; state: string });
    await poll(async () => (await phases()).some((p) => p.kind === 'execute' && p.stage === 'agent'), 'far-1 to start the execute stage', 180_000);

    const stopping = cli(['stop', '--url', daemonUrl!, '--json'], cleanEnv({ MAESTRO_HOME: home }));
    // While it stops, the daemon answers anything but the stop and its health with DAEMON_STOPPING (no new work).
    const token = readFileSync(join(home, 'token'), 'utf8').trim();
    const refused = async () => {
      const res = await fetch(`${daemonUrl}/api/projects`, { headers: { authorization: `Bearer ${token}` } }).catch(() => null);
      return res?.status === 503 && ((await res.json()) as { error: { code: string } }).error.code === 'DAEMON_STOPPING';
    };
    await poll(refused, 'the stopping daemon to refuse other requests', 60_000);
    const stopped = await stopping;
    expect(stopped.stderr).toMatch(new RegExp(`^maestro: stopping the daemon at ${daemonUrl!.replace(/\./g, '\\.')} \\(pid \\d+ on ${OTHER_HOST}\\)`));
    expect(stopped.code, stopped.stderr).toBe(0);
    expect(JSON.parse(stopped.stdout)).toMatchObject({ stopped: true, host: OTHER_HOST });
    // As stop returns, the hand-over is done: the stage under way was let finish (its grace), and far-1's row, which
    // the hand-over takes off last, is gone from the database.
    expect((await phases()).filter((p) => p.kind === 'execute' && p.stage === 'agent').map((p) => p.state)).toContain('done');
    expect(await store.daemons.lastHeard('far-1')).toBeNull();
    await exited;
  });
});
