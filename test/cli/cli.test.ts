import { execFileSync } from 'node:child_process';
import { createServer as createHttpServer } from 'node:http';
/**
 * The `maestro` CLI end to end: a real daemon in this process (temporary
 * MAESTRO_HOME, port 0), the CLI as a child process, a temporary git
 * repository. Setup the scheduler would do (moving a task to a gate, opening a
 * run) goes through the daemon's own store.
 */
import { appendFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { delimiter, join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Project, Task } from '../../src/core/types.js';
import { loadProjectConfig } from '../../src/executor/projectConfig.js';
import { readInbox } from '../../src/executor/protocol/inbox.js';
import { freshSqlite, removeTempDirs, tempDir } from '../helpers/db.js';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { cleanEnv, cli, cliFor, cliJson, gitRepo, waitForOutput } from './helpers.js';
import { budget } from '../helpers/budget.js';
import { bareRemote, git } from '../helpers/repo.js';
import { bwrapUnusable } from '../helpers/bwrap.js';
import { freePort } from '../helpers/postgres.js';

afterEach(() => removeTempDirs());

/** The words bash reads in `command`, as a person pasting it gets them. */
function shellWords(command: string): string[] {
  return execFileSync('bash', ['-c', `printf '%s\\0' ${command}`], { encoding: 'utf8' }).split('\0').slice(0, -1);
}

/**
 * Each CLI process takes 1–5 s to start on this shared 2-core machine (tsx, and the
 * daemon modules `serve` imports eagerly); the long cases start twenty or so.
 */
const CLI_HEAVY_TIMEOUT = budget(300_000);

async function withDaemon<T>(fn: (d: TestDaemon) => Promise<T>, overrides: { home?: string; port?: number } = {}): Promise<T> {
  // No orchestrator loop: these tests set task states by hand and expect them to stay put.
  const d = await startTestDaemon(overrides, { noOrchestrator: true });
  try {
    return await fn(d);
  } finally {
    await d.stop();
  }
}

describe('maestro CLI without a daemon', () => {
  it('init writes a config the executor loads, with checks guessed from the repository, and refuses a second init and a non-repository', async () => {
    const repo = gitRepo({ 'package.json': JSON.stringify({ name: 'x', scripts: { test: 'vitest run', lint: 'eslint .' } }) });
    const first = await cliJson<{ configPath: string; config: { checks: Record<string, string> } }>(['init', repo]);
    expect(first.code).toBe(0);
    expect(first.body.configPath).toBe(join(repo, '.maestro/config.json'));
    expect(first.body.config.checks).toEqual({ lint: 'npm run lint', test: 'npm test' });
    const loaded = loadProjectConfig(repo);
    expect(loaded.checks.map((c) => c.name)).toEqual(['lint', 'test']);
    expect(loaded.models).toEqual({ hard: 'opus', medium: 'sonnet', easy: 'haiku' });
    expect(readFileSync(join(repo, '.maestro/README.md'), 'utf8')).toContain('reviewRounds');

    const again = await cliJson<{ error: { code: string } }>(['init', repo]);
    expect(again.code).toBe(1);
    expect(again.body.error.code).toBe('ALREADY_EXISTS');
    expect((await cli(['init', repo, '--force'])).code).toBe(0);

    const plain = tempDir('maestro-not-a-repo-');
    const refused = await cli(['init', plain]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`${plain} is not inside a git repository`);
    expect(existsSync(join(plain, '.maestro'))).toBe(false);
  });

  it('says clearly that no daemon runs and how to start one', async () => {
    const port = await freePort();
    const r = await cli(['task', 'list', '--url', `http://127.0.0.1:${port}`]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`No Maestro daemon answers at http://127.0.0.1:${port}`);
    expect(r.stderr).toContain('maestro serve');
    const status = await cliJson<{ daemon: { running: boolean } }>(['status'], cleanEnv({ MAESTRO_PORT: String(port) }));
    expect(status.code).toBe(1);
    expect(status.body.daemon).toEqual({ url: `http://127.0.0.1:${port}`, running: false });
  });

  it('--help names the commands that work without a daemon; a usage error exits 2', async () => {
    const help = await cli(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/Without a daemon: `init`, `doctor` and the knowledge commands/);
    // Every exit code the README lists (141: the reader of the output stopped early, test/cli/closedPipe.test.ts).
    expect(help.stdout).toContain('Exit codes: 0 ok, 1 error, 2 usage, 141 when the reader of the output stopped early (| head).');
    const usage = await cli(['task', 'create']);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain("missing required argument 'title'");
    expect((await cli(['task', 'list', '--status', 'sleeping'])).code).toBe(2);
    // A misspelt command or option: the error, commander's suggestion and where the usage is, not the whole help.
    const command = await cli(['projct', 'add', '.']);
    expect([command.code, command.stderr]).toEqual([2, "error: unknown command 'projct'\n(Did you mean project?)\n(run it with --help for its usage)\n"]);
    const option = await cli(['init', '--frce']);
    expect([option.code, option.stderr]).toEqual([2, "error: unknown option '--frce'\n(Did you mean --force?)\n(run it with --help for its usage)\n"]);
    // A misspelt status with the one it is nearest to, as commander says of a misspelt option.
    const typo = await cli(['task', 'list', '--status', 'ready,doen']);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toContain("argument 'ready,doen' is invalid. unknown status doen (did you mean done?); statuses are ready, queued,");
    // With --json a script gets the usual error object on stdout, not commander's text.
    const jsonUsage = await cli(['task', 'create', '--json']);
    expect(jsonUsage.code).toBe(2);
    expect(JSON.parse(jsonUsage.stdout)).toEqual({ error: { code: 'BAD_INPUT', message: "missing required argument 'title'" } });
    expect(jsonUsage.stderr).toBe('');
    // An option value out of range is a usage error too, said in one line, never a stack trace.
    for (const [args, said] of [[['serve', '--port', '99999'], 'a port is 0–65535, got "99999"'], [['observe', '--once', '--poll', '5'], 'a poll interval is an integer from 20 to 3600000 (ms, an hour), got "5"'], [['observe', '--once', '--poll', '99999999999'], 'a poll interval is an integer from 20 to 3600000 (ms, an hour), got "99999999999"']] as const) {
      const bad = await cli([...args]);
      expect(bad.code, args.join(' ')).toBe(2);
      expect(bad.stderr).toContain(said);
      expect(bad.stderr).not.toMatch(/\n\s+at |Node\.js v/);
    }
  });

  it('doctor reports each check, and fails when the port is taken by something else', async () => {
    // Something that is not Maestro holds the port: it answers HTTP, but not Maestro's API.
    const server = createHttpServer((_req, res) => res.writeHead(404).end('not here'));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as { port: number }).port;
    try {
      const taken = await cliJson<{ ok: boolean; checks: { name: string; status: string; detail: string }[] }>(['doctor', '--url', `http://127.0.0.1:${port}`]);
      expect(taken.code).toBe(1);
      expect(taken.body.ok).toBe(false);
      const byName = Object.fromEntries(taken.body.checks.map((c) => [c.name, c]));
      expect(byName.git!.status).toBe('ok');
      expect(byName.node!.status).toBe('ok');
      expect(byName.sqlite!.status).toBe('ok');
      expect(byName['agent credentials']!.status).toBe('warn');
      expect(byName.port).toMatchObject({ status: 'fail' });
      expect(byName.port!.detail).toContain('in use by something that is not a Maestro daemon');
    } finally {
      await new Promise((r) => server.close(r));
    }
    const withKey = await cliJson<{ ok: boolean; checks: { name: string; status: string }[] }>(['doctor', '--url', `http://127.0.0.1:${await freePort()}`], cleanEnv({ ANTHROPIC_API_KEY: 'sk-test' }));
    expect(withKey.code).toBe(0);
    // Without bubblewrap (a developer machine; never CI) the sandbox line warns, as the next test shows.
    expect(withKey.body.checks.filter((c) => c.status !== 'ok').map((c) => c.name)).toEqual(bwrapUnusable() ? ['agent sandbox'] : []);
    expect(withKey.body.checks.map((c) => c.name)).toEqual(expect.arrayContaining(['home', 'database', 'agent sandbox']));
    if (!bwrapUnusable()) expect(withKey.body.checks).toContainEqual({ name: 'agent sandbox', status: 'ok', detail: "agents and checks run in the bwrap sandbox, network: shared (the host's, its loopback and private networks too)" });
  });

  it('doctor says whether agents would run in the sandbox, and why not', async () => {
    type Doctor = { checks: { name: string; status: string; detail: string }[] };
    const sandboxLine = async (env: Record<string, string>) => {
      const r = await cliJson<Doctor>(['doctor', '--url', `http://127.0.0.1:${await freePort()}`], cleanEnv(env));
      return r.body.checks.find((c) => c.name === 'agent sandbox');
    };
    const noBwrap = { PATH: tempDir('maestro-empty-path-') };
    expect(await sandboxLine(noBwrap)).toMatchObject({ status: 'warn', detail: expect.stringMatching(/^agents and checks run as you, unsandboxed: bwrap is not installed .*apt-get install bubblewrap/) });
    expect(await sandboxLine({ ...noBwrap, MAESTRO_AGENT_SANDBOX: 'bwrap' })).toMatchObject({ status: 'fail', detail: expect.stringMatching(/^agentSandbox is "bwrap", but bwrap is not installed/) });
    expect(await sandboxLine({ ...noBwrap, MAESTRO_AGENT_SANDBOX: 'off' })).toMatchObject({ status: 'ok', detail: expect.stringContaining('agentSandbox is "off"') });
  });

  it('under npm start, doctor finds the agent CLIs on the person\'s PATH, not the ones this installation tests with', async () => {
    type Doctor = { checks: { name: string; status: string; detail: string }[] };
    // npm puts the package's node_modules/.bin first; Maestro's holds codex (a devDependency its tests drive).
    const ownBin = resolve('node_modules', '.bin');
    const codexLine = async (env: Record<string, string>) => {
      const r = await cliJson<Doctor>(['doctor', '--url', `http://127.0.0.1:${await freePort()}`], cleanEnv({ PATH: `${ownBin}${delimiter}${cleanEnv().PATH}`, ...env }));
      return r.body.checks.find((c) => c.name === 'agent codex')!.detail;
    };
    expect(await codexLine({})).toContain(join(ownBin, 'codex')); // run as given: that PATH is the person's own
    expect(await codexLine({ npm_lifecycle_event: 'start' })).not.toContain(ownBin);
  });

  it('doctor finds a corrupt database and an emptied one, naming the file', async () => {
    const home = tempDir('maestro-doctor-home-');
    const db = join(home, 'maestro.db');
    const port = String(await freePort());
    writeFileSync(db, Buffer.alloc(8192, 0x41));
    const corrupt = await cliJson<{ ok: boolean; checks: { name: string; status: string; detail: string }[] }>(['doctor'], cleanEnv({ MAESTRO_HOME: home, MAESTRO_PORT: port }));
    expect(corrupt.code).toBe(1);
    expect(corrupt.body.checks.find((c) => c.name === 'database')).toEqual({ name: 'database', status: 'fail', detail: expect.stringMatching(new RegExp(`^${db} is corrupt \\(it does not start with the SQLite header`)) });
    // A damaged page inside a real database: the header is fine, quick_check is not.
    const good = Buffer.from(readFileSync(await migratedSqliteFile()));
    good.fill(0xff, 4096 + 16, 4096 * 3);
    writeFileSync(db, good);
    const damaged = await cliJson<{ checks: { name: string; status: string; detail: string }[] }>(['doctor'], cleanEnv({ MAESTRO_HOME: home, MAESTRO_PORT: port }));
    expect(damaged.code).toBe(1);
    expect(damaged.body.checks.find((c) => c.name === 'database')).toMatchObject({ status: 'fail', detail: expect.stringContaining(`${db} is corrupt`) });
    // Empty beside earlier work: the lost-database case the daemon refuses.
    writeFileSync(db, '');
    mkdirSync(join(home, 'demo', 'greeter'), { recursive: true });
    writeFileSync(join(home, 'demo', 'greeter', 'README.md'), 'x');
    const emptied = await cliJson<{ checks: { name: string; status: string; detail: string }[] }>(['doctor'], cleanEnv({ MAESTRO_HOME: home, MAESTRO_PORT: port }));
    expect(emptied.code).toBe(1);
    expect(emptied.body.checks.find((c) => c.name === 'database')).toMatchObject({ status: 'fail', detail: expect.stringContaining(`${db} is empty (0 bytes) but ${home} holds earlier work (demo)`) });
    // The database the daemon was started with (serve --database), not the home's.
    const given = await cliJson<{ checks: { name: string; status: string; detail: string }[] }>(['doctor', '--database', `sqlite:${await migratedSqliteFile()}`], cleanEnv({ MAESTRO_HOME: home, MAESTRO_PORT: port }));
    expect(given.body.checks.find((c) => c.name === 'database')).toMatchObject({ status: 'ok' });
  });
});

describe('maestro CLI against a daemon', () => {
  it('adds a project on a shared remote: the bare repository, named as the remote (README "Running on several machines")', () =>
    withDaemon(async (d) => {
      const { cli, cliJson } = cliFor(d.config.home);
      const url = ['--url', d.url];
      const remote = bareRemote(tempDir('maestro-remote-'));
      const alone = await cli(['project', 'add', remote, ...url]);
      expect(alone.code).toBe(2);
      expect(alone.stderr).toContain('is a bare repository');
      const shared = await cliJson<{ project: Project }>(['project', 'add', remote, '--remote', remote, ...url]);
      expect(shared.code).toBe(0);
      expect(shared.body.project).toMatchObject({ name: 'remote', repoPath: remote, config: { remote } });
      expect((await cli(['project', 'show', 'remote', ...url])).stdout).toContain(`\n  shared remote: ${remote} (each daemon works in its own clone)\n`);
      expect(shared.body.project.config.baseBranch).toBeUndefined(); // main: nothing to say
      // A remote whose default branch is master: tasks start from it, and the user is told where that came from.
      const onMaster = bareRemote(tempDir('maestro-remote-'));
      git(onMaster, 'branch', '-m', 'main', 'master');
      const master = await cli(['project', 'add', onMaster, '--remote', onMaster, '--name', 'old-remote', ...url]);
      expect(master.code).toBe(0);
      expect(master.stdout).toContain("\nTasks start from master and merge into it (the shared remote's default branch; `maestro project config set baseBranch <branch> --project old-remote` changes it).\n");
    }));

  it('says which hooks and checks a repository runs when it is added, and puts them on record', () =>
    withDaemon(async (d) => {
      const { cli } = cliFor(d.config.home);
      const repo = gitRepo({
        '.maestro/config.json': JSON.stringify({ checks: { test: 'npm test', lint: ['npx', 'eslint', '.'] } }),
        '.maestro/hooks/before-task-claim.sh': '#!/bin/sh\necho {}\n',
        '.maestro/hooks.mjs': 'export default {};\n',
      });
      const added = await cli(['project', 'add', repo, '--name', 'hooked', '--url', d.url]);
      expect(added.code).toBe(0);
      expect(added.stdout).toContain(
        [
          'The repository runs these on this machine from its first task on (look at them if you did not write them):',
          '  hook   .maestro/hooks.mjs',
          '  hook   .maestro/hooks/before-task-claim.sh',
          '  check  test: npm test',
          '  check  lint: npx eslint .',
        ].join('\n'),
      );
      const [created] = (await d.store.events.list({ type: 'project.created' })).events;
      expect(created?.payload.runs).toEqual({ hooks: ['.maestro/hooks.mjs', '.maestro/hooks/before-task-claim.sh'], checks: [{ name: 'test', command: 'npm test' }, { name: 'lint', command: ['npx', 'eslint', '.'] }], problem: null });
      // A repository that runs nothing by itself gets no such lines.
      const plain = await cli(['project', 'add', gitRepo(), '--name', 'plain', '--url', d.url]);
      expect(plain.stdout).not.toContain('runs these');
      expect(plain.stdout).not.toContain('Tasks start from');
      // A repository whose work is on master: its tasks start from master, and the user is told how to change that.
      const onMaster = gitRepo();
      git(onMaster, 'branch', '-m', 'main', 'master');
      const master = await cli(['project', 'add', onMaster, '--name', 'old', '--url', d.url]);
      expect(master.code).toBe(0);
      expect(master.stdout).toContain('\nTasks start from master and merge into it (the branch checked out there; `maestro project config set baseBranch <branch> --project old` changes it).\n');
      // A repository whose settings do not load can run no task: said when it is added, and at each task, naming its branch.
      const broken = gitRepo({ '.maestro/config.json': JSON.stringify({ limits: { maxDiffLines: -1 } }) });
      git(broken, 'branch', '-m', 'main', 'trunk');
      const problem = `${broken}/.maestro/config.json: limits.maxDiffLines: Too small: expected number to be >0`;
      const unloadable = await cli(['project', 'add', broken, '--name', 'broken', '--url', d.url]);
      expect(unloadable.code).toBe(0);
      expect(unloadable.stdout).toContain(`\nNo task of it can run until this is fixed on trunk and committed: ${problem}.\n`);
      expect(unloadable.stdout).not.toContain('runs these');
      const task = await cli(['task', 'create', 'x', '--project', 'broken', '--url', d.url]);
      expect(task.stderr).toContain(`Project broken cannot run tasks: ${problem}. Fix it on trunk and commit it; no task was created. [CONFIG_INVALID]`);
    }));

  it("prints commands that paste as they read for a project named after a folder with a space and a quote", () =>
    withDaemon(async (d) => {
      const { cli } = cliFor(d.config.home);
      const url = ['--url', d.url];
      const name = "my repo's";
      const repo = join(tempDir('maestro-cli-named-'), name);
      mkdirSync(repo);
      git(repo, 'init', '-q', '-b', 'master');
      writeFileSync(join(repo, 'README.md'), '# x\n');
      git(repo, 'add', '-A');
      git(repo, '-c', 'user.name=Test', '-c', 'user.email=test@example.com', 'commit', '-q', '-m', 'initial');
      // Each command printed names the project as one word: the words bash reads end with --project and the name.
      const endsWithProject = (command: string) => expect(shellWords(command).slice(-2), command).toEqual(['--project', name]);
      const added = await cli(['project', 'add', repo, ...url]);
      expect(added.code).toBe(0);
      endsWithProject(/`(maestro project config set baseBranch <branch> --project .+)` changes it/.exec(added.stdout)![1]!.replace('<branch>', 'trunk'));
      endsWithProject(/Give it one: (maestro .+) \(docs\/agents\.md\)/.exec(added.stdout)![1]!.replace('<kind>', 'codex'));
      expect((await cli(['project', 'archive', name, ...url])).code).toBe(0);
      const restore = (said: string) => expect(shellWords(/`(maestro project restore .+)` brings it back/.exec(said)![1]!).slice(-1), said).toEqual([name]);
      restore((await cli(['project', 'add', repo, ...url])).stderr);
      restore((await cli(['task', 'create', 'x', '--project', name, ...url])).stderr);
      const shown = (await cli(['project', 'show', name, ...url])).stdout;
      expect(shellWords(/\(`(maestro project restore .+)`\)/.exec(shown)![1]!).slice(-1), shown).toEqual([name]);
    }));

  it('task create without --project picks the project holding the folder it runs in, or the only one; else it names them and creates nothing', () =>
    withDaemon(async (d) => {
      const { cli, cliJson } = cliFor(d.config.home);
      const url = ['--url', d.url];
      const none = await cli(['task', 'create', 'First', ...url]);
      expect(none.stderr).toContain('No project yet: add one with `maestro project add <path>`.');
      const [shopRepo, apiRepo] = [gitRepo(), gitRepo({ 'src/main.ts': '' })];
      const shop = (await cliJson<{ project: Project }>(['project', 'add', shopRepo, '--name', 'shop', ...url])).body.project;
      // Run outside every project: the only one.
      expect((await cliJson<{ task: Task }>(['task', 'create', 'Only one', ...url])).body.task.projectId).toBe(shop.id);
      const api = (await cliJson<{ project: Project }>(['project', 'add', apiRepo, '--name', 'api', ...url])).body.project;
      expect((await cliJson<{ task: Task }>(['task', 'create', 'Here', ...url], undefined, join(apiRepo, 'src'))).body.task.projectId).toBe(api.id);
      const unsure = await cli(['task', 'create', 'Where', ...url]);
      expect(unsure.code).toBe(2);
      expect(unsure.stderr).toContain('Name the project with --project (one of: ');
      expect((await cliJson<{ tasks: Task[] }>(['task', 'list', ...url])).body.tasks.map((t) => t.title).sort()).toEqual(['Here', 'Only one']);
    }));

  it('adds a project, creates and lists tasks, approves and rejects gates, cancels and retries', () =>
    withDaemon(async (d) => {
      const { cli, cliJson } = cliFor(d.config.home);
      const url = ['--url', d.url];
      const repo = gitRepo();
      const added = await cliJson<{ project: Project }>(['project', 'add', repo, '--name', 'shop', ...url]);
      expect(added.code).toBe(0);
      expect(added.body.project).toMatchObject({ name: 'shop', repoPath: repo });
      const dup = await cliJson<{ error: { code: string } }>(['project', 'add', repo, '--name', 'shop', ...url]);
      expect(dup.code).toBe(1);
      expect(dup.body.error.code).toBe('DUPLICATE_PROJECT');
      const notRepo = await cli(['project', 'add', tempDir('maestro-plain-'), ...url]);
      expect(notRepo.code).toBe(2);
      expect(notRepo.stderr).toContain('is not a git repository');

      const base = await cliJson<{ task: Task }>(['task', 'create', 'Add a basket', '--project', 'shop', '--priority', 'P0', '--complexity', 'hard', '--owned-files', 'src/basket.ts, src/api.ts', '--type', 'feature', '--scope', 'module', '--expected', 'a basket API', '--spec', 'A basket holds items and their counts.', ...url]);
      expect(base.code, base.stderr).toBe(0);
      expect(base.body.task).toMatchObject({ title: 'Add a basket', priority: 0, complexity: 'hard', ownedFiles: ['src/basket.ts', 'src/api.ts'], taskType: 'feature', scope: 'module', expectedOutput: 'a basket API', spec: 'A basket holds items and their counts.', status: 'ready' });
      const dependent = await cliJson<{ task: Task }>(['task', 'create', 'Checkout', '--project', added.body.project.id, '--deps', base.body.task.id, ...url]);
      expect(dependent.body.task.deps).toEqual([base.body.task.id]);
      const badDep = await cliJson<{ error: { code: string } }>(['task', 'create', 'Broken', '--project', 'shop', '--deps', 'nope', ...url]);
      expect(badDep.code).toBe(1);
      expect(badDep.body.error.code).toBe('UNKNOWN_TASK');

      const listed = await cliJson<{ tasks: Task[] }>(['task', 'list', '--project', 'shop', '--status', 'ready', ...url]);
      expect(listed.body.tasks.map((t) => t.title).sort()).toEqual(['Add a basket', 'Checkout']);
      const human = await cli(['task', 'list', ...url]);
      expect(human.stdout).toMatch(/ID\s+STATUS\s+PRI\s+COMPLEXITY\s+TITLE/);
      expect(human.stdout).toContain('Add a basket');

      // The scheduler's part, done by hand: the task reaches the plan gate.
      const id = base.body.task.id;
      for (const to of ['queued', 'planning', 'plan_review'] as const) await d.store.tasks.transition(id, to);
      const wrongGate = await cliJson<{ error: { code: string } }>(['task', 'approve', id, '--gate', 'exec_review', ...url]);
      expect(wrongGate.code).toBe(1);
      expect(wrongGate.body.error.code).toBe('WRONG_GATE');
      expect((await d.store.tasks.get(id)).status).toBe('plan_review');
      const approved = await cliJson<{ task: Task }>(['task', 'approve', id, '--gate', 'plan_review', '--reason', 'looks right', ...url]);
      expect(approved.code).toBe(0);
      expect(approved.body.task.status).not.toBe('plan_review');
      expect((await d.store.approvals.list({ taskId: id }))[0]).toMatchObject({ gate: 'plan_review', decision: 'approve', reason: 'looks right' });

      const other = dependent.body.task.id;
      for (const to of ['queued', 'planning', 'plan_review'] as const) await d.store.tasks.transition(other, to);
      expect((await cli(['task', 'reject', other, '--gate', 'plan_review', ...url])).code).toBe(2);
      const rejected = await cliJson<{ task: Task; next: Task }>(['task', 'reject', other, '--gate', 'plan_review', '--reason', 'split the payment step', ...url]);
      expect(rejected.code).toBe(0);
      expect(rejected.body.task.status).toBe('superseded');
      expect(rejected.body.next).toMatchObject({ version: 2, feedback: expect.stringContaining('split the payment step') });

      const shown = await cliJson<{ task: Task; runs: unknown[] }>(['task', 'show', rejected.body.next.id, ...url]);
      expect(shown.body.task.id).toBe(rejected.body.next.id);
      const unknown = await cli(['task', 'show', 'no-such-task', ...url]);
      expect(unknown.code).toBe(1);
      expect(unknown.stderr).toContain('[UNKNOWN_TASK]');

      const next = rejected.body.next.id;
      const notWaiting = await cliJson<{ error: { code: string; message: string } }>(['task', 'reply', next, 'use stripe', ...url]);
      expect(notWaiting.code).toBe(1);
      expect(notWaiting.body.error.code).toBe('ILLEGAL_TRANSITION');
      expect(notWaiting.body.error.message).toContain('not awaiting_input');
      expect((await cliJson<{ task: Task }>(['task', 'cancel', next, '--reason', 'not now', ...url])).body.task.status).toBe('cancelled');
      const twice = await cliJson<{ error: { code: string } }>(['task', 'cancel', next, ...url]);
      expect(twice.body.error.code).toBe('ILLEGAL_TRANSITION');
      expect((await cliJson<{ task: Task }>(['task', 'retry', next, ...url])).body.task.status).toBe('ready');

      const status = await cliJson<{ daemon: { running: boolean }; projects: { name: string; tasksByStatus: Record<string, number> }[] }>(['status', ...url]);
      expect(status.code).toBe(0);
      expect(status.body.daemon.running).toBe(true);
      expect(status.body.projects).toHaveLength(1);
      expect(status.body.projects[0]!.tasksByStatus).toMatchObject({ ready: 2, superseded: 1 });
      const shownProject = await cliJson<{ project: Project; tasksByStatus: Record<string, number> }>(['project', 'show', 'shop', ...url]);
      expect(shownProject.body.project.id).toBe(added.body.project.id);
      expect((await cli(['project', 'show', 'nope', ...url])).code).toBe(1);
    }), CLI_HEAVY_TIMEOUT);

  it('sends MAESTRO_TOKEN to a daemon bound beyond loopback, and reports a missing token with the API code', async () => {
    const d = await startTestDaemon({ host: '0.0.0.0', token: 'secret-token-1' }, { noOrchestrator: true });
    try {
      const url = `http://127.0.0.1:${d.port}`;
      const refused = await cliJson<{ error: { code: string } }>(['project', 'list', '--url', url]);
      expect(refused.code).toBe(1);
      expect(refused.body.error.code).toBe('UNAUTHORIZED');
      const allowed = await cliJson<{ projects: unknown[] }>(['project', 'list', '--url', url], cleanEnv({ MAESTRO_TOKEN: 'secret-token-1' }));
      expect(allowed.code).toBe(0);
      expect(allowed.body.projects).toEqual([]);
    } finally {
      await d.stop();
    }
  }, CLI_HEAVY_TIMEOUT);

  it('says which token file it read when a daemon refuses it: a CLI run with another MAESTRO_HOME than its daemon', async () => {
    const d = await startTestDaemon({}, { noOrchestrator: true });
    try {
      const url = `http://127.0.0.1:${d.port}`;
      const other = tempDir('maestro-other-home-');
      const none = await cli(['task', 'list', '--url', url], cleanEnv({ MAESTRO_HOME: other }));
      expect(none.code).toBe(1);
      expect(none.stderr).toContain(`Here, the CLI found no token at ${join(other, 'token')}: run it with the MAESTRO_HOME of the daemon at ${url}, or set MAESTRO_TOKEN. [UNAUTHORIZED]`);
      writeFileSync(join(other, 'token'), `${'x'.repeat(43)}\n`, { mode: 0o600 });
      const wrong = await cli(['task', 'list', '--url', url], cleanEnv({ MAESTRO_HOME: other }));
      expect(wrong.stderr).toContain(`Here, the CLI sent the token of ${join(other, 'token')}: if the daemon at ${url} runs with another MAESTRO_HOME, run the CLI with that one. [UNAUTHORIZED]`);
      expect((await cli(['task', 'list', '--url', url], cleanEnv({ MAESTRO_HOME: d.config.home }))).code).toBe(0);
    } finally {
      await d.stop();
    }
  }, CLI_HEAVY_TIMEOUT);

  it('finds the daemon of MAESTRO_HOME on whatever port it listens, with no --url; not once it stopped', async () => {
    const d = await startTestDaemon({}, { noOrchestrator: true });
    const env = cleanEnv({ MAESTRO_HOME: d.config.home });
    try {
      expect(d.port).not.toBe(4300);
      const found = await cliJson<{ projects: unknown[] }>(['project', 'list'], env);
      expect(found).toMatchObject({ code: 0, body: { projects: [] } });
    } finally {
      await d.stop();
    }
    expect(existsSync(join(d.config.home, 'daemon.url'))).toBe(false);
  }, CLI_HEAVY_TIMEOUT);

  it('shows runs and transcripts, injects into a running run, and follows the live stream across a daemon restart', async () => {
    const home = tempDir('maestro-home-');
    const repo = gitRepo();
    const runDir = tempDir('maestro-run-');
    let taskId = '';
    let runId = '';
    const record = (seq: number, text: string) => ({ type: 'token', stage: 'execute', text, seq, traceId: 'trace-1', runId, at: Date.now() });
    const child = await withDaemon(async (d) => {
      const { cli, cliJson, startCli } = cliFor(home);
      const url = ['--url', d.url];
      const project = await d.store.projects.create({ name: 'p', repoPath: repo });
      const task = await d.store.tasks.create({ projectId: project.id, title: 'Stream me' });
      taskId = task.id;
      for (const to of ['queued', 'executing'] as const) await d.store.tasks.transition(taskId, to);
      const run = await d.store.runs.create({ taskId, kind: 'execute', model: 'sonnet', traceId: 'trace-1', attempt: 1, runDir });
      runId = run.id;
      // What the agent wrote is shown without its colours; a clipboard write (OSC 52) is shown, not run.
      writeFileSync(join(runDir, 'transcript.jsonl'), `${JSON.stringify({ at: 1, stage: 'execute', role: 'agent', text: 'I will add the \u001b[1mroute\u001b[0m.\u001b]52;c;cm0gLXJmIH4=\u0007' })}\n`);

      const runs = await cliJson<{ runs: { id: string; kind: string }[] }>(['run', 'list', '--task', taskId, ...url]);
      expect(runs.body.runs.map((r) => r.id)).toEqual([runId]);
      const shown = await cliJson<{ run: { traceId: string; model: string } }>(['run', 'show', runId, ...url]);
      expect(shown.body.run).toMatchObject({ traceId: 'trace-1', model: 'sonnet' });
      expect((await cliJson<{ error: { code: string } }>(['run', 'show', 'nope', ...url])).body.error.code).toBe('UNKNOWN_RUN');

      const logs = await cli(['task', 'logs', taskId, ...url]);
      expect(logs.stdout).toBe(`Run ${runId} of ${taskId}: execute, running.\n[execute] agent: I will add the route.\\u{1b}]52;c;cm0gLXJmIH4=\\u{7}\n`);
      const injected = await cliJson<{ runId: string }>(['task', 'inject', taskId, 'also add a test', ...url]);
      expect(injected.body.runId).toBe(runId);
      expect(readInbox(runDir).map((m) => [m.type, m.text])).toEqual([['instruction', 'also add a test']]);

      // The agent asks; the task waits; `task reply` answers the question it asked.
      appendFileSync(join(runDir, 'outbox.ndjson'), `${JSON.stringify({ type: 'clarify', stage: 'execute', clarifyId: 'q1', question: 'Which route prefix?', seq: 1, traceId: 'trace-1', runId, at: Date.now() })}\n`);
      // As the ingestor records it: the question's event (a reply takes its id from there), then the status.
      await d.store.events.append({ projectId: project.id, taskId, runId, traceId: 'trace-1', type: 'run.clarify', payload: { question: 'Which route prefix?', clarifyId: 'q1', stage: 'execute' } });
      await d.store.tasks.transition(taskId, 'awaiting_input');
      const replied = await cliJson<{ runId: string }>(['task', 'reply', taskId, '/api/v2', ...url]);
      expect(replied.body.runId).toBe(runId);
      expect(readInbox(runDir).at(-1)).toMatchObject({ type: 'reply', text: '/api/v2', replyTo: 'q1' });
      expect((await d.store.tasks.get(taskId)).status).toBe('executing');

      // Follow: the question and the first token come from the outbox (replay), the next token live from the bus.
      mkdirSync(runDir, { recursive: true });
      appendFileSync(join(runDir, 'outbox.ndjson'), `${JSON.stringify(record(2, 'alpha-'))}\n`);
      const follower = startCli(['task', 'logs', taskId, '--follow', '--url', d.url]);
      const sink = { out: '' };
      follower.stdout!.on('data', (b: Buffer) => (sink.out += b.toString()));
      await waitForOutput(follower, 'alpha-', sink);
      // As the ingestor streams a record: the worker wrote it to the outbox first (a replay takes the outbox's records in sequence).
      appendFileSync(join(runDir, 'outbox.ndjson'), `${JSON.stringify(record(3, 'beta-\u001b[2A'))}\n`);
      d.bus.publishStream({ id: `${runId}:3`, taskId, runId, seq: 3, kind: 'token', data: { stage: 'execute', text: 'beta-\u001b[2A' } });
      await waitForOutput(follower, 'beta-', sink);
      return { follower, sink, port: d.port };
    }, { home });

    // The daemon is gone; a new one on the same home and port takes over. The follower
    // reconnects with Last-Event-ID, so the replay sends only what it has not seen.
    appendFileSync(join(runDir, 'outbox.ndjson'), `${JSON.stringify(record(4, 'gamma-'))}\n`);
    const { follower, sink, port } = child;
    await withDaemon(async (d2) => {
      await waitForOutput(follower, 'gamma-', sink);
      await d2.store.tasks.transition(taskId, 'cancelled');
      d2.bus.publishStream({ id: `${runId}:5`, taskId, runId, seq: 5, kind: 'result', data: { kind: 'execute' } });
      const code = await new Promise<number | null>((r) => (follower.exitCode !== null ? r(follower.exitCode) : follower.on('close', r)));
      expect(code).toBe(0);
    }, { home, port }).catch((err) => {
      follower.kill('SIGKILL');
      throw err;
    });
    expect(sink.out.match(/alpha-/g)).toHaveLength(1);
    expect(sink.out.match(/\? Which route prefix\?/g)).toHaveLength(1);
    // A cursor move streamed live (it would climb over the lines above) is shown, not run.
    expect(sink.out).toContain('alpha-beta-\\u{1b}[2Agamma-');
    // It says why it stopped following.
    expect(sink.out).toMatch(new RegExp(`══ ${taskId} is cancelled(: [^\\n]*)? ══\\n$`));
  }, CLI_HEAVY_TIMEOUT);
});

/** A migrated SQLite database file, closed, with its WAL folded in. */
async function migratedSqliteFile(): Promise<string> {
  const { db, path } = await freshSqlite();
  await db.run('PRAGMA wal_checkpoint(TRUNCATE)');
  await db.close();
  return path;
}
