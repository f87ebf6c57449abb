/**
 * Another local user's program on the daemon's loopback port while no daemon runs there (the default :4300, free
 * between a stop and the next start): the CLI sent it `Authorization: Bearer <token>` with the first `task list`,
 * and the token, the same from one start to the next, would drive the daemon once it ran. Now nothing is sent to a
 * port another user holds, and the command says so. Needs root, to run the listener as another user (nobody).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { budget } from '../helpers/budget.js';
import { removeTempDirs, tempDir } from '../helpers/db.js';
import { cleanEnv, cli } from '../cli/helpers.js';

const NOBODY = 65534;
const TOKEN = 'Sq'.repeat(21) + 'x';

/** Prints its port, then one line per request with the Authorization it carried; answers as a daemon would look. */
const LISTENER = `
const http = require('node:http');
const server = http.createServer((req, res) => {
  process.stdout.write('REQUEST ' + req.url + ' auth=' + (req.headers.authorization || 'none') + '\\n');
  res.writeHead(200, { 'content-type': 'application/json', 'x-trace-id': 't' }).end('{"projects":[],"tasks":[]}');
});
server.listen(0, '127.0.0.1', () => process.stdout.write('PORT ' + server.address().port + '\\n'));
`;

let listener: ChildProcess | null = null;
afterEach(() => {
  listener?.kill('SIGKILL');
  listener = null;
  removeTempDirs();
});

/** The listener, started as `uid`; resolves with its port and what it has heard so far. */
async function startListener(uid: number | undefined): Promise<{ port: number; heard: { out: string } }> {
  const heard = { out: '' };
  listener = spawn(process.execPath, ['-e', LISTENER], { cwd: '/', stdio: ['ignore', 'pipe', 'inherit'], ...(uid === undefined ? {} : { uid, gid: uid }) });
  listener.stdout!.on('data', (d: Buffer) => (heard.out += d.toString()));
  const port = await new Promise<number>((resolve, reject) => {
    listener!.on('exit', (code) => reject(new Error(`the listener exited (${code}) before listening`)));
    const check = () => {
      const m = /PORT (\d+)/.exec(heard.out);
      if (m) resolve(Number(m[1]));
    };
    listener!.stdout!.on('data', check);
  });
  return { port, heard };
}

function homeWithToken(): string {
  const home = tempDir('maestro-squat-home-');
  writeFileSync(join(home, 'token'), `${TOKEN}\n`);
  chmodSync(home, 0o700);
  chmodSync(join(home, 'token'), 0o600);
  return home;
}

const root = process.getuid?.() === 0;
if (!root) console.warn('portSquat.test.ts: not root, so no listener of another user can be started; the squatter cases are skipped');

describe('the CLI and another user\'s program on the daemon\'s port', { timeout: budget(60_000) }, () => {
  it.skipIf(!root)('sends it no token: task list and search (asked to use the daemon) are refused, saying whose port it is', async () => {
    const { port, heard } = await startListener(NOBODY);
    const env = cleanEnv({ MAESTRO_HOME: homeWithToken(), MAESTRO_PORT: String(port) });
    const list = await cli(['task', 'list'], env);
    expect(list.code, list.stdout + list.stderr).toBe(1);
    expect(list.stderr).toContain(`maestro: A program of another user (uid ${NOBODY}) listens at 127.0.0.1:${port}, not your daemon: the CLI sent it nothing`);
    expect(list.stderr).toContain('[NOT_A_DAEMON]');
    const search = await cli(['search', 'anything'], { ...env, MAESTRO_SEARCH_DAEMON: 'on' });
    expect(search.code, search.stdout + search.stderr).toBe(1);
    expect(search.stderr).toContain(`another user (uid ${NOBODY})`);
    expect(heard.out).not.toContain(TOKEN);
    expect(heard.out).not.toContain('REQUEST');
  });

  it('still sends the token to a program of its own user (where the token file is readable anyway)', async () => {
    const { port, heard } = await startListener(undefined);
    const env = cleanEnv({ MAESTRO_HOME: homeWithToken(), MAESTRO_PORT: String(port) });
    const list = await cli(['task', 'list'], env);
    expect(list.stderr).not.toContain('another user');
    expect(heard.out).toMatch(new RegExp(`REQUEST /api/tasks\\S* auth=Bearer ${TOKEN}`));
  });
});
