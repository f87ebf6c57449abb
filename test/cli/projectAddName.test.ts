/**
 * `maestro project add <folder>` of a folder whose name the daemon refuses as a project name (an escape
 * character in it) said "Invalid --name" to a person who had given no --name. It says the name came from the
 * folder, why it is refused, and to give --name; with --name the project is added.
 */
import { renameSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { budget } from '../helpers/budget.js';
import { removeTempDirs } from '../helpers/db.js';
import { startTestDaemon } from '../helpers/daemon.js';
import { cliFor, gitRepo } from './helpers.js';

afterEach(() => removeTempDirs());

describe('maestro project add: a folder name that is no project name', { timeout: budget(120_000) }, () => {
  it('says the name came from the folder and to give --name', async () => {
    const d = await startTestDaemon({}, { noOrchestrator: true });
    try {
      const { cli } = cliFor(d.config.home);
      const url = ['--url', d.url];
      const made = gitRepo();
      const repo = join(dirname(made), 'shop\x1b[31mred');
      renameSync(made, repo);

      const refused = await cli(['project', 'add', repo, ...url]);
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain('The project name taken from the folder, "shop\\u{1b}[31mred", is not allowed (it must be one line without control characters');
      expect(refused.stderr).toContain('give the project a name with --name <name>');
      expect(refused.stderr).not.toContain('Invalid --name');

      // A --name the person typed is still refused as theirs.
      const typed = await cli(['project', 'add', repo, '--name', 'bad\x1bname', ...url]);
      expect(typed.code).toBe(2);
      expect(typed.stderr).toContain('Invalid --name');

      const added = await cli(['project', 'add', repo, '--name', 'shop', ...url]);
      expect(added.code, added.stderr).toBe(0);
      expect(added.stdout).toContain('Added project shop');
    } finally {
      await d.stop();
    }
  });
});
