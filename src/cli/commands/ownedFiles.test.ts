import { spawnSync } from 'node:child_process';
import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { ownedFilesEdit } from '../../core/diffGateWays.js';
import { guardValues } from '../input.js';
import { withApi } from './common.js';
import { ownedFilesGiven, ownedFilesOptions } from './ownedFiles.js';

/** The owned files `task edit` reads from `words`, with its options and checks (task edit's, less the daemon call). */
function parsed(words: string[]): string[] | undefined {
  const [list, path] = ownedFilesOptions(true);
  const edit = withApi(new Command('edit').exitOverride().configureOutput({ writeErr: () => undefined }).argument('<id>').addOption(list).addOption(path).option('--no-owned-files'));
  guardValues(edit, words);
  edit.parse(words, { from: 'user' });
  return ownedFilesGiven(edit.opts());
}

/** The words bash makes of `command` (LC_ALL=C: no UTF-8 locale to lean on), after `maestro task edit`. */
function bashWords(command: string): string[] {
  const prefix = 'maestro task edit ';
  expect(command.startsWith(prefix)).toBe(true);
  const out = spawnSync('bash', ['-c', `printf '%s\\0' ${command.slice(prefix.length)}`], { env: { ...process.env, LC_ALL: 'C' } });
  expect(out.status, out.stderr.toString()).toBe(0);
  return out.stdout.toString('utf8').split('\0').slice(0, -1);
}

describe("task create / task edit's owned files", () => {
  it('takes --owned-file whole and the comma list split, the list first, each repeatable', () => {
    expect(parsed(['t_1', '--owned-file', 'a,b.md', '--owned-files', 'x.ts, y.ts', '--owned-file', ' c ', '--owned-files', 'z/'])).toEqual(['x.ts', 'y.ts', 'z/', 'a,b.md', ' c ']);
    expect(parsed(['t_1', '--no-owned-files'])).toEqual([]);
    expect(parsed(['t_1'])).toBeUndefined();
  });

  it('refuses a NUL, a line break, a path out of the repository and an empty list, naming the option and the value', () => {
    expect(() => parsed(['t_1', '--owned-file', 'a\0b'])).toThrow("option '--owned-file <path>' argument 'a\0b' is invalid. The path must not contain control characters");
    expect(() => parsed(['t_1', '--owned-files', 'ok.ts,a\nb'])).toThrow(`argument 'ok.ts,a\nb' is invalid. The path "a\\nb" must not contain control characters`);
    expect(() => parsed(['t_1', '--owned-file', 'src/../../x'])).toThrow('must be a path inside the repository');
    expect(() => parsed(['t_1', '--owned-files', ',,'])).toThrow('It names no path');
    expect(() => parsed(['t_1', '--no-owned-files', '--owned-file', 'a'])).toThrow('give one or the other');
  });

  it("reads back exactly the paths of the diff gate's suggested edit, once bash has read it", () => {
    const cases = [
      { owned: ['src/'], outside: ['package.json', 'docs/a.md'] },
      { owned: ['src/**'], outside: ["it's here.md", 'a b.md'] },
      { owned: ['src/'], outside: ['docs/a,b.md'] },
      { owned: ['src/'], outside: [' lead'] },
      { owned: ['src/'], outside: ['trail '] },
      { owned: [], outside: ['--json'] },
      { owned: ['src/'], outside: ['-x', 'back\\slash', '$(touch x) `id` ~ !x *.ts'] },
      { owned: ['src/'], outside: ['zero\u200bwidth.ts', 'bidi\u202eexe.txt', 'nbsp\u00a0x', 'bom\ufeff', "q'\u200b\\"] },
    ];
    for (const { owned, outside } of cases) {
      const { command, named } = ownedFilesEdit('t_1', owned, { count: outside.length, files: outside });
      expect(named).toBe(true);
      expect(parsed(bashWords(command)), command).toEqual([...owned, ...outside]);
    }
    // A control character, which git allows in a name and ownedFiles does not: the glob that covers the file.
    const controls = ownedFilesEdit('t_1', [], { count: 2, files: ['tab\tx.ts', 'sep\u2028\u001bx'] });
    expect(parsed(bashWords(controls.command))).toEqual(['tab?x.ts', 'sep??x']);
  });
});
