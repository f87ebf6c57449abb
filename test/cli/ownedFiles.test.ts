/**
 * A task's owned files through `maestro task create` and `task edit` on a real daemon: a path that holds a comma
 * (legal in git) is given whole with --owned-file, the comma list still works for scripts and both combine; a bad
 * path is refused naming the option and the value, changing nothing. And the `task edit` that `task show` suggests
 * after a diff gate refusal, pasted into a real bash, gives the daemon exactly the paths: commas, spaces at either
 * end, quotes, shell metacharacters, a leading '-', and characters a screen does not show; a tab, which no owned
 * path may hold, as the glob that covers the file.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Task } from '../../src/core/types.js';
import { budget } from '../helpers/budget.js';
import { removeTempDirs, tempDir } from '../helpers/db.js';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { maestroArgs } from '../helpers/maestro.js';
import { snapshot } from '../store/contract.js';
import { cleanEnv, cliFor, gitRepo, ROOT, type CliResult } from './helpers.js';

afterEach(() => removeTempDirs());

/** `command` as a person pastes it into bash, `maestro` being this build's CLI; LC_ALL=C: no UTF-8 locale to lean on. */
function inBash(command: string, env: NodeJS.ProcessEnv): Promise<CliResult> {
  const maestro = [process.execPath, ...maestroArgs()].map((w) => `'${w.replace(/'/g, `'\\''`)}'`).join(' ');
  expect(command).toMatch(/^maestro /);
  const child = spawn('bash', ['-c', `${maestro} ${command.slice('maestro '.length)}`], { cwd: ROOT, env: { ...env, LC_ALL: 'C' }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** A task the diff gate refused for `outside`, as a run records it (executor.ts's run.phase details). */
async function refusedFor(d: TestDaemon, projectId: string, ownedFiles: string[], outside: string[]): Promise<Task> {
  const task = await d.store.tasks.create({ projectId, title: 'Refused', ownedFiles });
  for (const to of ['queued', 'executing'] as const) await d.store.tasks.transition(task.id, to);
  const run = await d.store.runs.create({ taskId: task.id, kind: 'execute', model: 'sonnet', traceId: 'trace-1', attempt: 1, runDir: tempDir('maestro-run-') });
  await d.store.events.append({ projectId, taskId: task.id, runId: run.id, type: 'run.phase', payload: { state: 'failed', detail: { attention: 'diff_gate', details: { outsideOwned: outside, outsideOwnedCount: outside.length } } } });
  return d.store.tasks.transition(task.id, 'needs_attention', { fields: { lastRunError: `DIFF_GATE: ${outside.length} file(s) outside ownedFiles` } });
}

describe('owned files on the command line', { timeout: budget(240_000) }, () => {
  it('takes a path with a comma whole from --owned-file, after the comma list, at create and at edit', async () => {
    const d = await startTestDaemon({}, { noOrchestrator: true });
    try {
      const { cli, cliJson } = cliFor(d.config.home);
      const url = ['--url', d.url];
      const p = await d.store.projects.create({ name: 'shop', repoPath: gitRepo(), config: {} });
      const created = await cliJson<{ task: Task }>(['task', 'create', 'Docs', '--project', 'shop', '--owned-file', 'docs/a,b.md', '--owned-files', 'src/a.ts, src/b.ts', '--owned-file', ' lead.txt', ...url]);
      expect([created.code, created.stderr]).toEqual([0, '']);
      expect(created.body.task.ownedFiles).toEqual(['src/a.ts', 'src/b.ts', 'docs/a,b.md', ' lead.txt']);

      const id = created.body.task.id;
      const edited = await cli(['task', 'edit', id, '--owned-file', 'x,y.ts', ...url]);
      expect([edited.code, edited.stderr, edited.stdout]).toEqual([0, '', `Edited ${id} (ready):\n  owned files: src/a.ts, src/b.ts, docs/a,b.md,  lead.txt → x,y.ts\n`]);
      // The comma list as scripts give it, repeated now: each adds its paths.
      expect((await cli(['task', 'edit', id, '--owned-files', 'a.ts,b.ts', '--owned-files', 'c.ts', ...url])).code).toBe(0);
      expect((await d.store.tasks.get(id)).ownedFiles).toEqual(['a.ts', 'b.ts', 'c.ts']);
      expect((await d.store.tasks.list({ projectId: p.id })).length).toBe(1);
    } finally {
      await d.stop();
    }
  });

  it('refuses an empty path, a line break, a path out of the repository, an empty list and --no-owned-files with --owned-file, naming each, and changes nothing', async () => {
    const d = await startTestDaemon({}, { noOrchestrator: true });
    try {
      const { cli } = cliFor(d.config.home);
      const url = ['--url', d.url];
      const p = await d.store.projects.create({ name: 'shop', repoPath: gitRepo(), config: {} });
      const t = await d.store.tasks.create({ projectId: p.id, title: 'Cart', ownedFiles: ['src/'] });
      const before = await snapshot(d.store.db);
      const refusals: Array<[string[], string]> = [
        [['--owned-file', ''], "option '--owned-file <path>' argument '' is invalid. It is empty: give a value, or leave the option out."],
        [['--owned-file', 'a\nb.ts'], "option '--owned-file <path>' argument 'a\nb.ts' is invalid. The path must not contain control characters (NUL, line breaks, tabs)."],
        [['--owned-files', 'src/a.ts,../b.ts'], `option '--owned-files <paths>' argument 'src/a.ts,../b.ts' is invalid. The path "../b.ts" must be a path inside the repository (relative, no "..").`],
        [['--owned-files', ' , '], "option '--owned-files <paths>' argument ' , ' is invalid. It names no path (to clear the list, task edit takes --no-owned-files)."],
        [['--no-owned-files', '--owned-file', 'a.ts'], '--no-owned-files clears the owned files and --owned-file sets them: give one or the other.'],
      ];
      for (const [options, message] of refusals) {
        const edit = await cli(['task', 'edit', t.id, ...options, ...url, '--json']);
        expect([edit.code, edit.stderr], options.join(' ')).toEqual([2, '']);
        expect(JSON.parse(edit.stdout).error, options.join(' ')).toEqual({ code: 'BAD_INPUT', message });
      }
      const create = await cli(['task', 'create', 'New', '--project', 'shop', '--owned-file', '/etc/passwd', ...url]);
      expect([create.code, create.stdout]).toEqual([2, '']);
      expect(create.stderr).toContain("option '--owned-file <path>' argument '/etc/passwd' is invalid. The path must be a path inside the repository");
      expect(await snapshot(d.store.db)).toEqual(before);
    } finally {
      await d.stop();
    }
  });

  it("task show's edit after a diff gate refusal, run by bash, gives exactly the paths, and runs nothing else", async () => {
    const d = await startTestDaemon({}, { noOrchestrator: true });
    try {
      const env = { ...cleanEnv(), MAESTRO_HOME: d.config.home };
      const { cli } = cliFor(d.config.home);
      const p = await d.store.projects.create({ name: 'shop', repoPath: gitRepo(), config: {} });
      const pwned = join(tempDir('maestro-pwned-'), 'pwned');
      const owned = ['src/', 'docs/a,b.md', ' lead.txt'];
      const outside = ['trail.txt ', "it's here.md", 'zero\u200bwidth.ts', 'bidi\u202eexe.txt', 'nbsp\u00a0x.md', '--json', 'back\\slash\\n.txt', `$(touch ${pwned})`, '`id` !x ~ *.ts', 'tab\té/ü.ts'];
      const task = await refusedFor(d, p.id, owned, outside);
      const shown = await cli(['task', 'show', task.id, '--url', d.url]);
      const command = /add them: (maestro task edit .*)$/m.exec(shown.stdout)?.[1];
      expect(command, shown.stdout).toBeDefined();
      // Nothing in it a screen does not show (é stays é).
      expect(command).not.toMatch(/(?! )[\p{C}\p{Z}]/u);

      const pasted = await inBash(`${command!} --url ${d.url}`, env);
      expect([pasted.code, pasted.stderr]).toEqual([0, '']);
      // The file with a tab (which ownedFiles cannot hold) as the glob that covers it.
      expect((await d.store.tasks.get(task.id)).ownedFiles).toEqual([...owned, ...outside.slice(0, -1), 'tab?é/ü.ts']);
      expect(existsSync(pwned)).toBe(false);

      // Paths a comma list keeps whole are given as one, as before.
      const plain = await refusedFor(d, p.id, ['src/'], ['package.json', 'docs/a b.md']);
      const plainShown = await cli(['task', 'show', plain.id, '--url', d.url]);
      expect(plainShown.stdout).toContain(`add them: maestro task edit ${plain.id} --owned-files 'src/,package.json,docs/a b.md'\n`);
      expect((await inBash(`maestro task edit ${plain.id} --owned-files 'src/,package.json,docs/a b.md' --url ${d.url}`, env)).code).toBe(0);
      expect((await d.store.tasks.get(plain.id)).ownedFiles).toEqual(['src/', 'package.json', 'docs/a b.md']);
    } finally {
      await d.stop();
    }
  });
});
