/**
 * A file descriptor `maestro serve` inherits without close-on-exec (a file the shell that started it had open,
 * `exec 40<secret`; a pipe of the program that launched it, like the 251 a CI runner leaves) reached every process
 * the daemon started, and theirs: Node passes a child only the stdio it is given and marks its own descriptors 0 to
 * 15 close-on-exec at start, but one above 15 survives every exec, and bwrap passes on whatever it has. An agent
 * read the file through /proc/self/fd/40. What an agent has open is
 * listed by a command agent itself (`ls -l /proc/$$/fd`), through the real CLI, daemon, worker and sandbox.
 */
import { spawn, type StdioOptions } from 'node:child_process';
import { closeSync, openSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { trackResource } from '../../src/lib/resources.js';
import { budget } from '../helpers/budget.js';
import { removeTempDirs, tempDir } from '../helpers/db.js';
import { maestroArgs } from '../helpers/maestro.js';
import { poll } from '../helpers/wait.js';
import { cleanEnv, cli, gitRepo, ROOT } from '../cli/helpers.js';

afterEach(() => removeTempDirs());

describe('descriptors the daemon inherits', () => {
  it('reach no agent: a command agent has its stdin, stdout and stderr open, and nothing else', async () => {
    const home = tempDir('maestro-home-');
    const secret = join(tempDir('maestro-secret-'), 'secret.txt');
    writeFileSync(secret, 'the launcher keeps this open\n');
    const fd = openSync(secret, 'r');
    const env = cleanEnv();
    // fd 40 of the daemon: the file, open without close-on-exec, as a shell's `exec 40<secret.txt` leaves it.
    const stdio: StdioOptions = ['ignore', 'pipe', 'pipe', ...Array<'ignore'>(37).fill('ignore'), fd];
    const daemon = spawn(process.execPath, [...maestroArgs(), 'serve', '--home', home, '--port', '0', '--no-demo'], { cwd: ROOT, env, stdio });
    closeSync(fd);
    const untrack = trackResource('process', `daemon ${daemon.pid}`, () => daemon.kill('SIGKILL'));
    let err = '';
    daemon.stderr!.on('data', (c: Buffer) => (err += c.toString()));
    try {
      const board = await new Promise<string>((resolve, reject) => {
        const check = () => {
          const m = /open the board: (\S+)/.exec(err);
          if (m && err.includes('Ctrl-C stops')) resolve(m[1]!);
        };
        daemon.stderr!.on('data', check);
        daemon.once('exit', (code) => reject(new Error(`serve exited (${code}) before it was ready: ${err}`)));
      });
      const cliEnv = { ...env, MAESTRO_HOME: home, MAESTRO_URL: new URL(board).origin };
      const run = async (args: string[]) => {
        const r = await cli(args, cliEnv);
        expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(0);
        return r.stdout;
      };
      const repo = gitRepo();
      await run(['project', 'add', repo, '--name', 'fds']);
      await run(['project', 'config', 'set', '--project', 'fds', 'provider.kind', 'command', 'provider.command', JSON.stringify(['/bin/sh', '-c', 'ls -l /proc/$$/fd; echo END-OF-LISTING'])]);
      const created = await run(['task', 'create', 'List what is open', '--project', 'fds', '--json']);
      const id = (JSON.parse(created) as { task: { id: string } }).task.id;
      const logs = await poll(
        async () => {
          const out = await run(['task', 'logs', id]);
          return out.includes('END-OF-LISTING') ? out : null;
        },
        'the agent to list its descriptors',
        120_000,
        1000,
      );
      // (The log shows the agent's output as streamed and again as its result: the same listing.)
      const open = new Set([...logs.matchAll(/ (\d+) -> /g)].map(([, n]) => Number(n)));
      expect([...open].sort((a, b) => a - b)).toEqual([0, 1, 2]);
      expect(logs).not.toContain(secret);
    } finally {
      daemon.kill('SIGTERM');
      await new Promise((r) => (daemon.exitCode !== null ? r(null) : daemon.once('exit', r)));
      untrack();
    }
  }, budget(240_000));
});
