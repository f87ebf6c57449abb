/**
 * `maestro task diff --stat` says what a symlink and a mode change are: before, a link an agent added showed as
 * `A key-link +1 -0` and a script made executable as `M run.sh +0 -0` (a trial). A real daemon, a real repository
 * whose task branch adds links (one out of the repository, one whose target holds control characters and a line
 * break, one that only climbs out by its text) and makes a script executable.
 */
import { chmodSync, mkdirSync, symlinkSync } from 'node:fs';
import { basename, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { budget } from '../helpers/budget.js';
import { removeTempDirs } from '../helpers/db.js';
import { startTestDaemon } from '../helpers/daemon.js';
import { git, makeRepo } from '../helpers/repo.js';
import { cliFor } from './helpers.js';

afterEach(() => removeTempDirs());

describe('maestro task diff and --stat: symlinks and modes', { timeout: budget(120_000) }, () => {
  it('names a link\'s target, escaped, and whether it points outside the repository, and a mode change', async () => {
    const d = await startTestDaemon({}, { noOrchestrator: true });
    try {
      const { cli, cliJson } = cliFor(d.config.home);
      const url = ['--url', d.url];
      const repo = makeRepo({ 'README.md': '# test\n', 'run.sh': 'echo hi\n', 'docs/v2.md': '# v2\n' });
      const project = await d.store.projects.create({ name: 'modes', repoPath: repo, config: {} });
      const task = await d.store.tasks.create({ projectId: project.id, title: 'Links and modes' });
      git(repo, 'checkout', '-q', '-b', `maestro/${task.id}-v1`);
      symlinkSync('../../../../root/.ssh/id_rsa', join(repo, 'key-link'));
      symlinkSync('v2.md', join(repo, 'docs/latest'));
      symlinkSync('../README.md', join(repo, 'docs/up'));
      // Out and back in by the repository's folder name: on disk it is README.md, by its text it depends on a name outside.
      symlinkSync(`../${basename(repo)}/README.md`, join(repo, 'round-trip'));
      mkdirSync(join(repo, 'sub'));
      symlinkSync('../../outside', join(repo, 'sub/escape'));
      symlinkSync('x\u001b[2Jy\nz', join(repo, 'odd-link'));
      chmodSync(join(repo, 'run.sh'), 0o755);
      git(repo, 'add', '-A');
      git(repo, 'commit', '-q', '-m', 'links and modes');
      git(repo, 'checkout', '-q', 'main');

      const stat = await cli(['task', 'diff', task.id, '--stat', ...url]);
      expect(stat.code).toBe(0);
      const lines = stat.stdout.split('\n');
      expect(lines).toContain('A  key-link -> ../../../../root/.ssh/id_rsa  (symlink, points outside the repository)');
      expect(lines).toContain('A  docs/latest -> v2.md  (symlink)');
      expect(lines).toContain('A  docs/up -> ../README.md  (symlink)');
      expect(lines).toContain(`A  round-trip -> ../${basename(repo)}/README.md  (symlink, points outside the repository)`);
      expect(lines).toContain('A  sub/escape -> ../../outside  (symlink, points outside the repository)');
      expect(lines).toContain('A  odd-link -> x\\u{1b}[2Jy\\u{a}z  (symlink)');
      expect(lines).toContain('M  run.sh  (mode 100644 → 100755)');
      expect(stat.stdout).not.toContain('\u001b');

      // The unified diff says it in each file's header too: a link's one line (its target) does not say where it leads.
      const unified = (await cli(['task', 'diff', task.id, ...url])).stdout.split('\n');
      expect(unified).toContain('A key-link -> ../../../../root/.ssh/id_rsa  (added, symlink, points outside the repository)');
      expect(unified).toContain('A docs/latest -> v2.md  (added, symlink)');
      expect(unified).toContain('M run.sh  (modified)');

      const json = await cliJson<{ files: Array<{ path: string; link: unknown }> }>(['task', 'diff', task.id, ...url]);
      expect(json.body.files.find((f) => f.path === 'key-link')?.link).toEqual({ target: '../../../../root/.ssh/id_rsa', outside: true });
      expect(json.body.files.find((f) => f.path === 'run.sh')?.link).toBeNull();
    } finally {
      await d.stop();
    }
  });
});
