/**
 * `maestro wiki migrate` as a process, where two items of one migration go to the same place:
 * both default sources (`wiki/knowledge-base/`, `knowledge-base/`) holding the same entry or an
 * `errors/` folder, `runtime/<id>-evidence.json` beside `evidence/<id>.json`. The first goes,
 * the second is a conflict left in place: nothing a person wrote is replaced.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { tempDir, type TempDir } from '../../src/observer/__fixtures__/transcript-builder.js';
import { budget } from '../helpers/budget.js';
import { maestroArgs } from '../helpers/maestro.js';

const run = promisify(execFile);

let dir: TempDir;
let repo: string;
beforeEach(async () => {
  dir = tempDir();
  repo = join(dir.path, 'repo');
  mkdirSync(repo);
  await run('git', ['init', '-q'], { cwd: repo });
});
afterEach(() => dir.cleanup());

function write(rel: string, text: string): void {
  mkdirSync(dirname(join(repo, rel)), { recursive: true });
  writeFileSync(join(repo, rel), text);
}
const read = (rel: string) => readFileSync(join(repo, rel), 'utf8');

async function maestro(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const env = { ...process.env, MAESTRO_HOME: join(dir.path, 'home'), CLAUDE_CONFIG_DIR: join(dir.path, 'claude'), FLOW_WIKI_DIR: '', FLOW_ROOT_DIR: '', FLOW_PROJECT_DIR: '' };
  try {
    const { stdout, stderr } = await run(process.execPath, [...maestroArgs(), ...args], { cwd: repo, env });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

describe('maestro wiki migrate with two items going to one place', () => {
  it('moves the first, reports the second as a conflict and leaves it where it was, in the plan and in the run', async () => {
    write('wiki/knowledge-base/contexts/C001-a.md', 'person A\n');
    write('knowledge-base/contexts/C001-a.md', 'person B\n');
    write('wiki/runtime/s1-evidence.json', JSON.stringify({ exp_1: { note: 'from runtime' } }));
    write('wiki/evidence/s1.json', JSON.stringify([{ explorationId: 'exp_2', note: 'from evidence' }]));
    const w = (rel: string) => join(repo, rel);

    // Exit 1 while a conflict is left (would be, in the plan), so that a script can tell; the report is the same.
    const plan = await maestro(['wiki', 'migrate', '--dry-run']);
    expect(plan.code, plan.stderr).toBe(1);
    expect(plan.stderr).toBe('');
    expect(plan.stdout).toContain('plan: 5 item(s), 2 of them conflict(s) left in place\n');
    expect(plan.stdout).toContain(`  move ${w('wiki/knowledge-base/contexts/C001-a.md')} → ${w('wiki/knowledge/contexts/C001-a.md')}\n`);
    expect(plan.stdout).toContain(`  conflict ${w('knowledge-base/contexts/C001-a.md')} → ${w('wiki/knowledge/contexts/C001-a.md')} (${w('wiki/knowledge-base/contexts/C001-a.md')} goes there in this migration; left in place)\n`);
    expect(plan.stdout).toContain(`  conflict ${w('wiki/evidence/s1.json')} → ${w('wiki/sessions/s1-evidence.json')} (${w('wiki/runtime/s1-evidence.json')} goes there in this migration; left in place)\n`);

    const done = await maestro(['wiki', 'migrate']);
    expect(done.code, done.stderr).toBe(1);
    expect(done.stdout).toContain('done: 5 item(s), 2 of them conflict(s) left in place\n');
    // Both people's text is still there: A's migrated, B's where it was.
    expect(read('wiki/knowledge/contexts/C001-a.md')).toBe('person A\n');
    expect(read('knowledge-base/contexts/C001-a.md')).toBe('person B\n');
    // The runtime cache was merged and kept; evidence/s1.json was not moved over it.
    expect(JSON.parse(read('wiki/sessions/.migrated/s1-evidence.json'))).toEqual({ exp_1: { note: 'from runtime' } });
    expect(JSON.parse(read('wiki/evidence/s1.json'))).toEqual([{ explorationId: 'exp_2', note: 'from evidence' }]);
    expect(Object.keys(JSON.parse(read('wiki/sessions/s1/bundle.json')).curation.evidence)).toEqual(['exp_1']);
    // Again, as JSON: the two conflicts are still there, and so is the exit code.
    const again = await maestro(['wiki', 'migrate', '--json']);
    expect(again.code, again.stderr).toBe(1);
    expect(JSON.parse(again.stdout).items.filter((i: { action: string }) => i.action === 'conflict')).toHaveLength(2);
  }, budget(60_000));

  it('trashes errors/ of both knowledge-base folders, each under its own path, in one run', async () => {
    write('wiki/knowledge-base/errors/E001-x.md', 'error A\n');
    write('knowledge-base/errors/E001-x.md', 'error B\n');
    const done = await maestro(['wiki', 'migrate']);
    expect(done.code, done.stderr).toBe(0);
    expect(done.stdout).toMatch(/^done: 2 item\(s\)\n/);
    const trash = join(repo, 'wiki/knowledge/.trash');
    const [stamp] = readdirSync(trash);
    expect(read(`wiki/knowledge/.trash/${stamp}/wiki/knowledge-base/errors/E001-x.md`)).toBe('error A\n');
    expect(read(`wiki/knowledge/.trash/${stamp}/knowledge-base/errors/E001-x.md`)).toBe('error B\n');
  }, budget(60_000));
});
