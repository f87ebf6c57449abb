import { describe, expect, it } from 'vitest';
import { EDIT_NAMES_AT_MOST, ownedFilesEdit, raiseLimitJson, shellWord } from './diffGateWays.js';

describe('the ways out of a diff gate refusal', () => {
  it('adds the files outside ownedFiles to them in one shell word, each once', () => {
    expect(ownedFilesEdit('t_1', ['src/'], { count: 2, files: ['package.json', 'docs/a.md'] })).toEqual({ command: 'maestro task edit t_1 --owned-files src/,package.json,docs/a.md', named: true });
    // Owned files edited since the refusal are not named twice; a glob or a space is quoted for the shell.
    expect(ownedFilesEdit('t_1', ['src/**', 'package.json'], { count: 2, files: ['package.json', "it's here.md"] }).command).toBe(`maestro task edit t_1 --owned-files 'src/**,package.json,it'\\''s here.md'`);
  });

  it('says <paths> past EDIT_NAMES_AT_MOST files, or when the refusal did not name them all', () => {
    const many = Array.from({ length: EDIT_NAMES_AT_MOST + 1 }, (_, i) => `f${i}.ts`);
    expect(ownedFilesEdit('t_1', ['src/'], { count: many.length, files: many })).toEqual({ command: 'maestro task edit t_1 --owned-files <paths>', named: false });
    expect(ownedFilesEdit('t_1', ['src/'], { count: 3, files: ['a.ts', 'b.ts'] }).named).toBe(false);
  });

  it('writes the config fragment that raises a limit, and leaves safe words unquoted', () => {
    expect(JSON.parse(raiseLimitJson('maxDiffLines', 2400))).toEqual({ limits: { maxDiffLines: 2400 } });
    expect(raiseLimitJson('maxFileBytes', 5_000_000)).toBe('{"limits": {"maxFileBytes": 5000000}}');
    expect(shellWord('src/a-b_c.ts,@x/y')).toBe('src/a-b_c.ts,@x/y');
  });
});
