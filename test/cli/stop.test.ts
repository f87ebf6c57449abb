/**
 * `maestro stop`: a real `maestro serve` process, stopped from another "terminal" by `maestro stop`, stops as at its
 * first SIGTERM (its terminal says so, it exits 0) and frees its home: a second serve on it starts. With no daemon
 * running, stop says so, exits 1 and asks nothing. The route behind it (POST /api/daemon/stop) is refused without
 * the token and from a foreign Origin, and a GET stops nothing: the daemon answers on after each.
 */
import { type ChildProcess } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { trackResource } from '../../src/lib/resources.js';
import { budget } from '../helpers/budget.js';
import { startTestDaemon } from '../helpers/daemon.js';
import { removeTempDirs, tempDir } from '../helpers/db.js';
import { GiveUp, poll } from '../helpers/wait.js';
import { cleanEnv, cli, startCli } from './helpers.js';

afterEach(() => removeTempDirs());

/** `maestro serve` on `home` (port 0), once it says it is ready; `exited` gives its exit code. */
async function serve(home: string): Promise<{ child: ChildProcess; stderr: () => string; exited: Promise<number | null> }> {
  const child = startCli(['serve', '--home', home, '--port', '0', '--no-demo'], cleanEnv());
  const untrack = trackResource('process', `daemon ${child.pid}`, () => child.kill('SIGKILL'));
  let err = '';
  child.stderr!.on('data', (c: Buffer) => (err += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => (untrack(), resolve(code))));
  await poll(() => {
    if (child.exitCode !== null) throw new GiveUp(`serve exited (${child.exitCode}) before it was ready: ${err}`);
    return err.includes('Ctrl-C stops');
  }, 'maestro serve to be ready', 240_000);
  return { child, stderr: () => err, exited };
}

describe('maestro stop', () => {
  it('stops a running maestro serve as its first SIGTERM does, which exits 0 and frees its home for the next serve; with none running it says so', async () => {
    const home = tempDir('maestro-home-');
    const env = cleanEnv({ MAESTRO_HOME: home });
    const first = await serve(home);
    try {
      const pid = first.child.pid!;
      const stopped = await cli(['stop'], env);
      expect(stopped.stderr).toMatch(new RegExp(`^maestro: stopping the daemon at http://127\\.0\\.0\\.1:\\d+ \\(pid ${pid} on [^)]+\\): its running stages get up to 30 s to finish; waiting up to 300 s for it to exit…\\n$`));
      expect(stopped.stdout).toBe(`Daemon stopped (pid ${pid}); ${home} is free for the next \`maestro serve\`.\n`);
      expect(stopped.code).toBe(0);
      // stop returned once the process was gone: its exit code is there already.
      expect(first.child.exitCode).toBe(0);
      expect(await first.exited).toBe(0);
      expect(first.stderr()).toMatch(/maestro: asked to stop by maestro stop: finishing running stages \(Ctrl-C or SIGTERM to stop now\)\nmaestro: daemon stopped\n$/);
    } finally {
      first.child.kill('SIGKILL');
    }

    const second = await serve(home);
    try {
      const stopped = await cli(['stop', '--json'], env);
      expect(stopped.code, stopped.stderr).toBe(0);
      expect(JSON.parse(stopped.stdout)).toMatchObject({ stopped: true, pid: second.child.pid, home });
      expect(await second.exited).toBe(0);
    } finally {
      second.child.kill('SIGKILL');
    }

    const none = await cli(['stop'], env);
    expect(none.stderr).toBe(`maestro: No Maestro daemon runs on ${home} (MAESTRO_HOME): nothing to stop. [DAEMON_NOT_RUNNING]\n`);
    expect(none.stdout).toBe('');
    expect(none.code).toBe(1);
  }, budget(600_000));

  it('given a URL where nothing answers, says there is nothing to stop', async () => {
    const home = tempDir('maestro-home-');
    // A port just closed: a daemon started and stopped here.
    const d = await startTestDaemon({}, { noOrchestrator: true });
    const url = d.url;
    await d.stop();
    const r = await cli(['stop', '--url', url], cleanEnv({ MAESTRO_HOME: home }));
    expect(r.stderr).toBe(`maestro: No Maestro daemon answers at ${url}: nothing to stop. [DAEMON_NOT_RUNNING]\n`);
    expect(r.code).toBe(1);
  }, budget(120_000));

  it('POST /api/daemon/stop is refused without the token and from another Origin, GET stops nothing; with the token the daemon stops', async () => {
    const d = await startTestDaemon({}, { noOrchestrator: true });
    try {
      const post = (headers: Record<string, string>) => fetch(`${d.url}/api/daemon/stop`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: '{}' });
      const answers = async () => (await d.fetch('/api/health')).status === 200;

      const noToken = await post({});
      expect(noToken.status).toBe(401);
      expect(((await noToken.json()) as { error: { code: string } }).error.code).toBe('UNAUTHORIZED');
      expect(await answers()).toBe(true);

      const foreign = await post({ ...d.auth, origin: 'http://evil.example' });
      expect(foreign.status).toBe(403);
      expect(((await foreign.json()) as { error: { code: string } }).error.code).toBe('FORBIDDEN');
      expect(await answers()).toBe(true);

      const get = await d.fetch('/api/daemon/stop');
      expect(get.status).toBe(404);
      expect(await answers()).toBe(true);

      const ok = await post(d.auth);
      expect(ok.status).toBe(202);
      expect(await ok.json()).toMatchObject({ stopping: true, pid: process.pid, home: d.config.home, graceMs: 30_000 });
      // The daemon's own stop() (no `maestro serve` around it): its port closes.
      await poll(async () => !(await answers().catch(() => false)), 'the daemon to stop answering', 60_000);
    } finally {
      await d.stop();
    }
  }, budget(180_000));
});
