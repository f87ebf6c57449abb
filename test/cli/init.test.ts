/** `maestro init` and the repository's housekeeping: .gitignore lines for Maestro's local state, and the advice to commit .maestro/. */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { removeTempDirs, tempDir } from '../helpers/db.js';
import { cli, gitRepo } from './helpers.js';
import { budget } from '../helpers/budget.js';

afterEach(() => removeTempDirs());

/** Which of `paths` git ignores in `repo` (git check-ignore exits 1 when none is). */
function ignored(repo: string, paths: string[]): string[] {
  try {
    return execFileSync('git', ['check-ignore', '--no-index', ...paths], { cwd: repo, encoding: 'utf8' }).trim().split('\n');
  } catch (err) {
    if ((err as { status?: number }).status === 1) return [];
    throw err;
  }
}

describe('maestro init', () => {
  it('ignores the index, locks and session run links under .workflow/, keeps knowledge and .maestro/ tracked, and says to commit .maestro/', async () => {
    const repo = gitRepo({ 'README.md': '# x\n', '.gitignore': 'node_modules/' });
    const first = await cli(['init', repo]);
    expect(first.code).toBe(0);
    expect(first.stdout).toContain(`Added 8 line(s) to ${join(repo, '.gitignore')}`);
    expect(first.stdout).toContain('Commit .maestro/');
    expect(first.stdout).toContain('git add .maestro .gitignore');
    const text = readFileSync(join(repo, '.gitignore'), 'utf8');
    expect(text.startsWith('node_modules/\n\n# Maestro:')).toBe(true);

    const local = ['.workflow/.maestro-index.db', '.workflow/.maestro-index.db-wal', '.workflow/.maestro-corpus.lock', '.workflow/knowhow/.lifecycle.lock', '.workflow/sessions/.session-store.lock', '.workflow/sessions/.active-run', '.workflow/sessions/task-t-5294084c5d21e5ca/session.json', '.workflow/sessions/task-t-5294084c5d21e5ca/runs/r1', '.workflow/.trash/knowledge-audit-1/x.md', '.workflow/.knowledge-audit/audit-log.jsonl'];
    const shared = ['.maestro/config.json', '.maestro/hooks.ts', '.workflow/specs/api.md', '.workflow/knowhow/recipe.md', '.workflow/sessions/s1/session.json', '.workflow/sessions/s1/runs/r1/report.md'];
    expect(ignored(repo, local).sort()).toEqual([...local].sort());
    expect(ignored(repo, shared)).toEqual([]);

    // Again (--force): nothing is added twice.
    expect((await cli(['init', repo, '--force'])).stdout).not.toContain('to .gitignore');
    expect(readFileSync(join(repo, '.gitignore'), 'utf8')).toBe(text);
  }, budget(120_000));

  it("keeps the observer's session bundles and the audit log out of git status, changing no tracked file for the bundles; curated wiki entries stay listed", async () => {
    const repo = gitRepo({ 'README.md': '# x\n' });
    const first = await cli(['init', repo]);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toContain("Added /wiki/sessions/ to .git/info/exclude (not committed): the observer's session bundles hold your prompts and the answers.");
    expect(readFileSync(join(repo, '.gitignore'), 'utf8')).not.toContain('wiki');
    execFileSync('git', ['add', '-A'], { cwd: repo });
    execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-qm', 'Maestro setup'], { cwd: repo });
    const files: Record<string, string> = {
      'wiki/sessions/abc/bundle.json': '{"explorations":{"exp_1":{"question":"my private prompt"}}}\n',
      'wiki/sessions/_index.json': '{}\n',
      '.workflow/.knowledge-audit/audit-log.jsonl': '{"audit_id":"AUD-1"}\n',
      'wiki/knowledge/contexts/debug/C001-retry.md': '---\nid: "C001"\n---\n',
    };
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(join(repo, path, '..'), { recursive: true });
      writeFileSync(join(repo, path), text);
    }
    const status = execFileSync('git', ['status', '--porcelain', '--untracked-files=all'], { cwd: repo, encoding: 'utf8' });
    expect(status).toBe('?? wiki/knowledge/contexts/debug/C001-retry.md\n');
    // Again: nothing is added twice, and nothing is said.
    const again = await cli(['init', repo, '--force']);
    expect(again.stdout).not.toContain('info/exclude');
    expect(readFileSync(join(repo, '.git/info/exclude'), 'utf8').split('\n').filter((l) => l === '/wiki/sessions/')).toHaveLength(1);
  }, budget(60_000));

  it('refuses a repository whose settings are in config.yaml, naming it, and writes nothing', async () => {
    const repo = gitRepo({ 'README.md': '# x\n' });
    mkdirSync(join(repo, '.maestro'));
    const yaml = 'checks: {test: "make test"}\nmergeStrategy: ff-only\n';
    writeFileSync(join(repo, '.maestro/config.yaml'), yaml);
    const refused = await cli(['init', repo]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`maestro: ${join(repo, '.maestro/config.yaml')} already exists: this repository has Maestro settings; nothing was written.`);
    expect(readdirSync(join(repo, '.maestro'))).toEqual(['config.yaml']);
    expect(readFileSync(join(repo, '.maestro/config.yaml'), 'utf8')).toBe(yaml);
    expect(existsSync(join(repo, '.gitignore'))).toBe(false);
    // --force writes config.json, and says the yaml is no longer read.
    const forced = await cli(['init', repo, '--force']);
    expect(forced.code, forced.stderr).toBe(0);
    expect(forced.stdout).toContain(`${join(repo, '.maestro/config.yaml')} is no longer read: config.json comes first.`);
  }, budget(60_000));

  it('checks every target before writing: a .gitignore folder or a .maestro file is refused by name, and nothing is written', async () => {
    const ignoreDir = gitRepo({ 'README.md': '# x\n' });
    mkdirSync(join(ignoreDir, '.gitignore'));
    const a = await cli(['init', ignoreDir]);
    expect(a.code).toBe(2);
    expect(a.stderr).toContain(`maestro: ${join(ignoreDir, '.gitignore')} is a folder; \`maestro init\` needs a file it can add lines to, or nothing there.`);
    expect(existsSync(join(ignoreDir, '.maestro'))).toBe(false);
    // Nothing half-done: once the folder is gone, init runs (it used to say ALREADY_EXISTS).
    execFileSync('rmdir', [join(ignoreDir, '.gitignore')]);
    expect((await cli(['init', ignoreDir])).code).toBe(0);

    const maestroFile = gitRepo({ 'README.md': '# x\n', '.maestro': 'not a folder\n' });
    const b = await cli(['init', maestroFile]);
    expect(b.code).toBe(2);
    expect(b.stderr).toContain(`maestro: ${join(maestroFile, '.maestro')} is a file; \`maestro init\` needs a folder`);
    expect(readFileSync(join(maestroFile, '.maestro'), 'utf8')).toBe('not a folder\n');
    expect(existsSync(join(maestroFile, '.gitignore'))).toBe(false);
  }, budget(60_000));

  it('writes nothing through a link the repository holds that leads out of it, naming the link: not .maestro/, nor .gitignore', async () => {
    // A cloned repository's `.gitignore -> ~/.bashrc` would have had Maestro's lines appended to the person's shell file.
    const victim = tempDir('maestro-victim-');
    const rcfile = join(victim, 'rcfile');
    writeFileSync(rcfile, 'export PATH=$HOME/bin:$PATH\n');
    const repo = gitRepo({ 'README.md': '# x\n' });
    symlinkSync(rcfile, join(repo, '.gitignore'));
    symlinkSync(victim, join(repo, '.maestro'));
    const both = await cli(['init', repo]);
    expect(both.code).toBe(1);
    expect(both.stderr).toContain(`Refusing to write ${join(repo, '.maestro')}: ${join(repo, '.maestro')} is a symbolic link leading to ${victim}, outside the repository ${repo}.`);
    expect(both.stderr).toContain('Nothing was written.');
    expect(readdirSync(victim)).toEqual(['rcfile']);
    expect(readFileSync(rcfile, 'utf8')).toBe('export PATH=$HOME/bin:$PATH\n');

    execFileSync('rm', [join(repo, '.maestro')]);
    const ignore = await cli(['init', repo]);
    expect(ignore.code).toBe(1);
    expect(ignore.stderr).toContain(`Refusing to write ${join(repo, '.gitignore')}: ${join(repo, '.gitignore')} is a symbolic link leading to ${rcfile}, outside the repository ${repo}.`);
    expect(readFileSync(rcfile, 'utf8')).toBe('export PATH=$HOME/bin:$PATH\n');
    expect(existsSync(join(repo, '.maestro'))).toBe(false);

    // A README.md in a real .maestro/ that links out is not read (to compare it) nor replaced: refused too.
    execFileSync('rm', [join(repo, '.gitignore')]);
    mkdirSync(join(repo, '.maestro'));
    symlinkSync(rcfile, join(repo, '.maestro', 'README.md'));
    const readme = await cli(['init', repo]);
    expect(readme.code).toBe(1);
    expect(readme.stderr).toContain(`${join(repo, '.maestro', 'README.md')} is a symbolic link leading to ${rcfile}, outside the repository ${repo}.`);
    expect(readdirSync(join(repo, '.maestro'))).toEqual(['README.md']);
    expect(existsSync(join(repo, '.gitignore'))).toBe(false);
    expect(readdirSync(victim)).toEqual(['rcfile']);
  }, budget(60_000));

  it('follows a .gitignore link to a file inside the repository, as before', async () => {
    const repo = gitRepo({ 'README.md': '# x\n', 'config/gitignore': 'node_modules/\n' });
    symlinkSync('config/gitignore', join(repo, '.gitignore'));
    const r = await cli(['init', repo]);
    expect(r.code, r.stderr).toBe(0);
    expect(readFileSync(join(repo, 'config/gitignore'), 'utf8')).toContain('.workflow/.maestro-index.db\n');
  }, budget(60_000));

  it('shows the control characters of a repository path as \\u{…} in its summary, not as a terminal would run them', async () => {
    // A folder named with an escape sequence (ESC [31m turns the rest of the terminal red; others move the cursor).
    const parent = tempDir('maestro-cli-repo-');
    const repo = join(parent, 'red\x1b[31mrepo');
    mkdirSync(repo);
    execFileSync('git', ['init', '-q', '-b', 'main'], { cwd: repo });
    const r = await cli(['init', repo]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).not.toContain('\x1b');
    const shown = join(parent, 'red\\u{1b}[31mrepo');
    expect(r.stdout).toContain(`Wrote ${join(shown, '.maestro/config.json')}`);
    expect(r.stdout).toContain(`Next: maestro project add ${shown}\n`);
    expect(existsSync(join(repo, '.maestro/config.json'))).toBe(true);
  }, budget(60_000));

  it("keeps a README.md of the person's own unless --force, and says so", async () => {
    const repo = gitRepo({ 'README.md': '# x\n' });
    mkdirSync(join(repo, '.maestro'));
    writeFileSync(join(repo, '.maestro/README.md'), 'my notes\n');
    const first = await cli(['init', repo]);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toContain(`Kept your ${join(repo, '.maestro/README.md')}: it differs from the one Maestro writes`);
    expect(readFileSync(join(repo, '.maestro/README.md'), 'utf8')).toBe('my notes\n');
    expect(existsSync(join(repo, '.maestro/config.json'))).toBe(true);
    const forced = await cli(['init', repo, '--force']);
    expect(forced.stdout).not.toContain('Kept your');
    expect(readFileSync(join(repo, '.maestro/README.md'), 'utf8')).toContain('# .maestro/');
  }, budget(60_000));
});
