import { describe, expect, it } from 'vitest';
import { EDIT_NAMES_AT_MOST, ownedFilesArgs, ownedFilesEdit, raiseLimitJson, shellWord } from './diffGateWays.js';

describe('the ways out of a diff gate refusal', () => {
  it('adds the files outside ownedFiles to them in one shell word, each once', () => {
    expect(ownedFilesEdit('t_1', ['src/'], { count: 2, files: ['package.json', 'docs/a.md'] })).toEqual({ command: 'maestro task edit t_1 --owned-files src/,package.json,docs/a.md', named: true });
    // Owned files edited since the refusal are not named twice; a glob or a space is quoted for the shell.
    expect(ownedFilesEdit('t_1', ['src/**', 'package.json'], { count: 2, files: ['package.json', "it's here.md"] }).command).toBe(`maestro task edit t_1 --owned-files 'src/**,package.json,it'\\''s here.md'`);
  });

  it('gives each path whole with --owned-file when a comma list would not read back as them', () => {
    expect(ownedFilesEdit('t_1', ['src/'], { count: 2, files: ['docs/a,b.md', 'x y.ts'] }).command).toBe(`maestro task edit t_1 --owned-file src/ --owned-file docs/a,b.md --owned-file 'x y.ts'`);
    // The list trims each of its paths, and a path named like an option is written after '='.
    expect(ownedFilesArgs([' lead', 'trail\u00a0'])).toBe(`--owned-file ' lead' --owned-file $'trail\\xc2\\xa0'`);
    expect(ownedFilesArgs(['a.ts', '--json', "-it's"])).toBe(`--owned-file a.ts --owned-file=--json --owned-file='-it'\\''s'`);
    expect(ownedFilesArgs(['a.ts', 'b c.ts'])).toBe(`--owned-files 'a.ts,b c.ts'`);
  });

  it("spells out what a screen does not show in bash's $'…', as UTF-8 bytes, so the command shows no hidden character", () => {
    expect(shellWord('zero\u200bwidth.ts')).toBe(`$'zero\\xe2\\x80\\x8bwidth.ts'`);
    expect(shellWord("it's \u202e\\n")).toBe(`$'it\\'s \\xe2\\x80\\xae\\\\n'`);
    const command = ownedFilesEdit('t_1', ['src/'], { count: 2, files: ['a\u2066b', 'soft\u00adhyphen'] }).command;
    expect(command).toBe(`maestro task edit t_1 --owned-files $'src/,a\\xe2\\x81\\xa6b,soft\\xc2\\xadhyphen'`);
    expect(command).toMatch(/^[\x20-\x7e]+$/);
    // The list would trim a byte order mark at the end (trim() takes it for a space): given whole.
    expect(ownedFilesArgs(['src/', 'bom\ufeff'])).toBe(`--owned-file src/ --owned-file $'bom\\xef\\xbb\\xbf'`);
    // A control character (git allows one in a name; ownedFiles does not) is added as '?', the glob that covers it.
    expect(ownedFilesEdit('t_1', [], { count: 1, files: ['tab\tx'] }).command).toBe("maestro task edit t_1 --owned-files 'tab?x'");
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
