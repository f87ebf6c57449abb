import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { ownedFilesGiven, ownedFilesOptions } from './ownedFiles.js';

/** The owned files `task edit` reads from `words`, with its own options (task edit's, less the daemon call). */
function parsed(words: string[]): string[] | undefined {
  const [list, path] = ownedFilesOptions(true);
  const edit = new Command('edit').exitOverride().configureOutput({ writeErr: () => undefined }).argument('<id>').addOption(list).addOption(path).option('--no-owned-files');
  edit.parse(words, { from: 'user' });
  return ownedFilesGiven(edit.opts());
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
});
