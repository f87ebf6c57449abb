/**
 * Bad input to the `maestro` CLI, as a person types it: each case is refused with a message naming the
 * option or argument and what was wrong with it, exit 2 for a usage error and 1 for a refusal, the
 * error object on stdout under --json, and nothing read, written or sent first. Most cases need no
 * daemon: a daemon command is pointed at a port nobody listens on, so a value that got past the CLI's
 * checks would show as DAEMON_UNREACHABLE instead.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { removeTempDirs, tempDir } from '../helpers/db.js';
import { startTestDaemon } from '../helpers/daemon.js';
import { silentServer } from '../helpers/silentServer.js';
import { budget } from '../helpers/budget.js';
import { cleanEnv, cli, cliFor, gitRepo, ROOT, type CliResult } from './helpers.js';
import { freePort } from '../helpers/postgres.js';

afterEach(() => removeTempDirs());

/** The error object a --json command printed: stdout holds it alone, stderr nothing. */
function jsonError(r: CliResult): { code: string; message: string } {
  expect(r.stderr, r.stdout).toBe('');
  return (JSON.parse(r.stdout) as { error: { code: string; message: string } }).error;
}

async function noDaemon(): Promise<string[]> {
  return ['--url', `http://127.0.0.1:${await freePort()}`];
}

// Separate processes on a loaded machine: generous time, no timing assertions.
describe('maestro CLI: bad input is refused before anything happens', { timeout: budget(240_000) }, () => {
  it("a command's --version is its own, not the program's (task diff --version printed 0.1.0 and exited 0)", async () => {
    const r = await cli(['task', 'diff', 't_none', '--version', '2', ...(await noDaemon()), '--json']);
    expect(jsonError(r).code).toBe('DAEMON_UNREACHABLE');
    expect(r.code).toBe(1);
    const zero = await cli(['task', 'diff', 't_none', '--version', '0', '--json']);
    expect(zero.code).toBe(2);
    expect(jsonError(zero).message).toContain('a version is a positive whole number, got "0"');
    // The program's own --version still works before a command.
    expect((await cli(['--version'])).stdout).toBe('0.1.0\n');
  });

  it('an empty value is refused by name, never read as "not given" (the current folder, the default daemon)', async () => {
    const url = await noDaemon();
    const add = await cli(['project', 'add', '', ...url, '--json']);
    expect(add.code).toBe(2);
    expect(jsonError(add)).toEqual({ code: 'BAD_INPUT', message: "command-argument value '' is invalid for argument 'path'. It is empty: give a value." });
    const list = await cli(['task', 'list', '--url', ' ', '--json']);
    expect(list.code).toBe(2);
    expect(jsonError(list).message).toBe("option '--url <url>' argument ' ' is invalid. It is empty: give a value, or leave the option out.");
    const port = await cli(['serve', '--port', '', '--home', tempDir('maestro-bad-home-')]);
    expect(port.code).toBe(2);
    expect(port.stderr).toContain("option '--port <port>' argument '' is invalid. It is empty");
  });

  it('an option followed by another option is refused, not given that option as its value', async () => {
    const r = await cli(['task', 'list', '--project', '--json', ...(await noDaemon())]);
    expect(r.code).toBe(2);
    expect(jsonError(r).message).toBe("option '--project <idOrName>' argument '--json' is invalid. --json is an option, not a value: --project <idOrName> needs its value right after it.");
  });

  it('a whole number is digits only: 0x10, 1e2 and " 5" are refused', async () => {
    const root = tempDir('maestro-bad-root-');
    for (const value of ['0x10', '1e2', ' 5', '99999999999999999999']) {
      const r = await cli(['search', 'foo', '--limit', value, '--no-daemon', '--workflow-root', root, '--json']);
      expect(r.code, value).toBe(2);
      expect(jsonError(r).message).toContain(`--limit must be an integer 1–200, got "${value}"`);
    }
  });

  it('a bad value read inside a command is a usage error with its code, and a missing --script registers nothing', async () => {
    const repo = gitRepo();
    const url = await noDaemon();
    const argv = await cli(['project', 'add', repo, '--provider', 'command', '--command', '[1]', ...url, '--json']);
    expect(argv.code).toBe(2);
    expect(jsonError(argv)).toEqual({ code: 'BAD_INPUT', message: '--command as JSON must be a non-empty array of strings.' });
    const missing = join(repo, 'no-such-script.json');
    const script = await cli(['project', 'add', repo, '--provider', 'scripted', '--script', missing, ...url, '--json']);
    expect(script.code).toBe(2);
    expect(jsonError(script)).toEqual({ code: 'BAD_INPUT', message: `--script ${missing} does not exist; nothing was registered.` });
    // A path from the repository's top, typed in another folder (the help calls the script a file in the repository): named.
    mkdirSync(join(repo, '.maestro'), { recursive: true });
    writeFileSync(join(repo, '.maestro', 'script.yaml'), 'steps: []\n');
    const relative = await cli(['project', 'add', repo, '--provider', 'scripted', '--script', '.maestro/script.yaml', ...url, '--json']);
    expect(relative.code).toBe(2);
    expect(jsonError(relative).message).toBe(`--script ${join(ROOT, '.maestro/script.yaml')} does not exist (a relative path is taken from this folder, ${ROOT}; the repository's is --script ${join(repo, '.maestro/script.yaml')}); nothing was registered.`);
  });

  it('--workflow-root must be an existing folder: a mistyped one is not created', async () => {
    const missing = join(tempDir('maestro-bad-root-'), 'typo');
    const r = await cli(['session', 'create', 's1', '--workflow-root', missing, '--json']);
    expect(r.code).toBe(2);
    expect(jsonError(r).message).toBe(`option '--workflow-root <dir>' argument '${missing}' is invalid. --workflow-root ${missing} does not exist.`);
    expect(existsSync(missing)).toBe(false);
  });

  it('--content-file must be a UTF-8 file: a FIFO does not hang, a folder or a Latin-1 file is named, nothing is staged', { timeout: budget(60_000) }, async () => {
    const root = tempDir('maestro-bad-root-');
    const W = ['--session', 's1', '--workflow-root', root, '--json'];
    expect((await cli(['session', 'create', 's1', '--workflow-root', root])).code).toBe(0);
    const fifo = join(root, 'pipe');
    execFileSync('mkfifo', [fifo]);
    const latin1 = join(root, 'latin1.txt');
    writeFileSync(latin1, Buffer.from([0x63, 0x61, 0x66, 0xe9])); // "café" in Latin-1
    mkdirSync(join(root, 'folder'));
    const said = {
      [fifo]: `--content-file: ${fifo} is a FIFO, not a regular file: nothing was read from it; give a file, or the text itself.`,
      [latin1]: `--content-file ${latin1} is not UTF-8 text; convert it (e.g. iconv -t UTF-8) and try again.`,
      [join(root, 'folder')]: `--content-file: ${join(root, 'folder')} is a folder, not a regular file: nothing was read from it; give a file, or the text itself.`,
      [join(root, 'none')]: `--content-file ${join(root, 'none')} does not exist.`,
    };
    for (const [file, message] of Object.entries(said)) {
      const r = await cli(['knowledge', 'stage', 'spec', 'T', '--content-file', file, ...W]);
      expect(r.code, file).toBe(2);
      expect(jsonError(r)).toEqual({ code: 'BAD_INPUT', message });
    }
    expect(existsSync(join(root, '.workflow', 'sessions', 's1', 'knowledge-delta.json'))).toBe(false);
  });

  it('an error echoing a value shows its escape sequences as text, never sends them to the terminal', async () => {
    const root = tempDir('maestro-escape-');
    const file = join(root, 'gone\u001b[2J\u001b[31mred');
    const r = await cli(['knowledge', 'stage', 'spec', 'T', '--content-file', file, '--session', 's1', '--workflow-root', root]);
    expect(r.code).toBe(2);
    expect(r.stderr).not.toContain('\u001b');
    expect(r.stderr).toBe(`maestro: --content-file ${file.replace(/\u001b/g, '\\u{1b}')} does not exist. [BAD_INPUT]\n`);
  });

  it('serve refuses a home that is a file and an address this machine has not, before creating the home', async () => {
    const file = join(tempDir('maestro-bad-home-'), 'file');
    writeFileSync(file, 'x');
    const asFile = await cli(['serve', '--home', file, '--port', '0']);
    expect(asFile.code).toBe(2);
    expect(asFile.stderr).toBe(`maestro: The home ${file} (--home, MAESTRO_HOME) is a file, not a folder. [BAD_INPUT]\n`);
    const home = join(tempDir('maestro-bad-home-'), 'home');
    const host = await cli(['serve', '--home', home, '--port', '0', '--host', 'no-such-host.invalid']);
    expect(host.code).toBe(2);
    expect(host.stderr).toMatch(/^maestro: Cannot listen on "no-such-host\.invalid" \(--host, MAESTRO_HOST\): \w+\. Give an address of this machine/);
    expect(existsSync(home)).toBe(false);
  });

  it('a daemon URL where something accepts and never answers ends the command, not after 5 minutes', { timeout: budget(90_000) }, async () => {
    const silent = await silentServer();
    try {
      // A health check waits 10 s at most, less when MAESTRO_READ_TIMEOUT says less.
      const r = await cli(['status', '--url', `http://127.0.0.1:${silent.port}`, '--json'], cleanEnv({ MAESTRO_READ_TIMEOUT: '2' }));
      expect(r.code).toBe(1);
      expect(JSON.parse(r.stdout)).toEqual({ daemon: { url: `http://127.0.0.1:${silent.port}`, running: false }, projects: [] });
      // A read waits MAESTRO_READ_TIMEOUT (a minute unless set), and says how long it waited.
      const read = await cli(['task', 'list', '--url', `http://127.0.0.1:${silent.port}`, '--json'], cleanEnv({ MAESTRO_READ_TIMEOUT: '1.5' }));
      expect(read.code).toBe(1);
      expect(jsonError(read)).toMatchObject({ code: 'DAEMON_UNREACHABLE', message: expect.stringContaining('it accepted the connection but sent no answer within 1.5 s') });
      // A value that is no number of seconds is refused before anything is asked.
      for (const bad of ['soon', '0', '-5', '1e3', '7200']) {
        const refused = await cli(['task', 'list', '--url', `http://127.0.0.1:${silent.port}`, '--json'], cleanEnv({ MAESTRO_READ_TIMEOUT: bad }));
        expect(refused.code, bad).toBe(2);
        expect(jsonError(refused).message).toBe(`MAESTRO_READ_TIMEOUT must be a number of seconds above 0 and at most 3600, got ${JSON.stringify(bad)}.`);
      }
    } finally {
      await silent.close();
    }
  });
});

describe('maestro CLI: ids that name nothing', { timeout: budget(240_000) }, () => {
  it("a value the daemon refuses is named by the option typed, not by the API's field", async () => {
    const d = await startTestDaemon({}, { noOrchestrator: true });
    try {
      const project = await d.store.projects.create({ name: 'p', repoPath: gitRepo(), config: {} });
      // An id longer than ids are (a path out of the repository in --owned-files is the CLI's own refusal now).
      const r = await cliFor(d.config.home).cli(['task', 'create', 'Escape', '--project', project.id, '--deps', `t_1,${'x'.repeat(201)}`, '--json'], cleanEnv());
      expect(r.code).toBe(2);
      const { code, message } = jsonError(r);
      expect(code).toBe('BAD_INPUT');
      expect(message).toMatch(/^Invalid --deps \(value 2\): /);
      expect(message).not.toContain('body');
      expect(await d.store.tasks.list({ projectId: project.id })).toEqual([]);
    } finally {
      await d.stop();
    }
  });

  it('run list --task with an unknown task says so, instead of "no runs"', async () => {
    const d = await startTestDaemon({}, { noOrchestrator: true });
    try {
      const r = await cliFor(d.config.home).cli(['run', 'list', '--task', 't_nope', '--json'], cleanEnv());
      expect(r.code).toBe(1);
      expect(jsonError(r)).toEqual({ code: 'UNKNOWN_TASK', message: 'No task "t_nope".' });
    } finally {
      await d.stop();
    }
  });
});
