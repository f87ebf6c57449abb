import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { loadProjectConfig, MAX_PROJECT_CONFIG_BYTES } from './projectConfig.js';

const repos: string[] = [];
afterEach(() => {
  for (const r of repos.splice(0)) rmSync(r, { recursive: true, force: true });
});

function repoWith(config: string | Buffer, name = 'config.json'): { repo: string; file: string } {
  const repo = mkdtempSync(join(tmpdir(), 'maestro-pconfig-'));
  repos.push(repo);
  mkdirSync(join(repo, '.maestro'));
  const file = join(repo, '.maestro', name);
  writeFileSync(file, config);
  return { repo, file };
}

/** `text` with each `<e9>` as the one byte 0xE9 (é in Latin-1): not UTF-8. */
const latin1 = (text: string) => Buffer.concat(text.split('<e9>').flatMap((part, i) => (i ? [Buffer.from([0xe9]), Buffer.from(part)] : [Buffer.from(part)])));

function refusal(repo: string): Error & { code?: string; details?: { problems?: string[] } } {
  try {
    loadProjectConfig(repo);
  } catch (e) {
    return e as Error & { code?: string };
  }
  throw new Error('the config was taken');
}

describe('.maestro/config.json', () => {
  it('refuses a settings file larger than 64 KiB before reading it (a 6 MB config.yaml held the daemon 16 s), and takes one of that size', () => {
    const { repo, file } = repoWith(`checks:\n${'  - a\n'.repeat(20_000)}`, 'config.yaml');
    const err = refusal(repo);
    expect(err.code).toBe('CONFIG_INVALID');
    expect(err.message).toBe(`${file} is 120,008 bytes, more than a project's settings file may be (65,536); it was not read. Keep only the settings in it.`);
    const json = JSON.stringify({ mergeStrategy: 'no-ff' });
    const { repo: atLimit } = repoWith(json + ' '.repeat(MAX_PROJECT_CONFIG_BYTES - json.length));
    expect(loadProjectConfig(atLimit).mergeStrategy).toBe('no-ff');
  });

  it('reads the map form of checks as name → command', () => {
    const { repo } = repoWith(JSON.stringify({ checks: { test: 'npm test', lint: ['npx', 'eslint', '.'] } }));
    expect(loadProjectConfig(repo).checks).toEqual([{ name: 'test', command: 'npm test' }, { name: 'lint', command: ['npx', 'eslint', '.'] }]);
  });

  it('refuses a check name it cannot use as CONFIG_INVALID naming the file and the check, not an internal error', () => {
    const { repo, file } = repoWith(JSON.stringify({ checks: { 'bad name!': 'true' } }));
    const err = (() => {
      try {
        loadProjectConfig(repo);
      } catch (e) {
        return e as Error & { code?: string };
      }
    })();
    expect(err?.code).toBe('CONFIG_INVALID');
    expect(err?.message).toContain(file);
    expect(err?.message).toContain('checks.bad name!');
    expect(err?.message).toContain('check names are letters, digits, _ . -');
  });

  it('says what a check command is and which keys the file takes, when one is wrong', () => {
    const { repo, file } = repoWith(JSON.stringify({ limts: { maxDiffLines: 3 }, checks: { test: 5 } }));
    expect(() => loadProjectConfig(repo)).toThrow(
      `${file}: (root): Unrecognized key: "limts" (did you mean limits? it takes checks, limits, models, mergeStrategy); checks.test: a command line (a string) or its argv (a list of strings)`,
    );
  });

  it('says the nearest key and the keys a nested object takes, for a misspelt limit or model tier; none for a name near nothing', () => {
    const { repo, file } = repoWith(JSON.stringify({ limits: { maxDifLines: 10 }, models: { hrd: 'opus', fastest: 'haiku' } }));
    expect(() => loadProjectConfig(repo)).toThrow(
      `${file}: limits: Unrecognized key: "maxDifLines" (did you mean maxDiffLines? it takes divergenceCommits, divergenceFiles, maxDiffFiles, maxDiffLines, maxFileBytes, reviewRounds, maxSubtasks, agentTimeoutMs, checkTimeoutMs, clarifyTimeoutMs); ` +
        `models: Unrecognized keys: "hrd", "fastest" (did you mean hard for hrd? it takes hard, medium, easy)`,
    );
  });

  it('refuses a model name that starts with "-": after --model an agent tool would read it as a flag of its own', () => {
    const { repo, file } = repoWith(JSON.stringify({ models: { hard: '--yolo', easy: 'haiku' } }));
    expect(() => loadProjectConfig(repo)).toThrow(`${file}: models.hard: a model name, not an option: it must not start with "-"`);
  });

  it('refuses a check command with bytes that are not UTF-8, naming the file, the check and the bytes, instead of running it as U+FFFD', () => {
    const { repo, file } = repoWith(latin1('{"checks": {"lint": "npx eslint .", "test": "npm run t<e9>st", "e2e": ["npx", "playwright", "--grep", "caf<e9>"]}}'));
    const err = refusal(repo);
    expect(err.code).toBe('CONFIG_INVALID');
    expect(err.message).toContain(file);
    expect(err.details?.problems).toEqual([
      'checks.test.command: holds bytes that are not UTF-8 (read as U+FFFD: "npm run t\ufffdst"), so it is not run or used as written; save the file as UTF-8',
      'checks.e2e.command.3: holds bytes that are not UTF-8 (read as U+FFFD: "caf\ufffd"), so it is not run or used as written; save the file as UTF-8',
    ]);
  });

  it('names a listed check by its place and its name, and a model the bytes fall in; bytes that are not UTF-8 in a comment are let be', () => {
    const listed = repoWith(latin1('checks:\n  - name: test\n    command: pytest -k r<e9>sum<e9>\nmodels:\n  hard: opus-<e9>\n'), 'config.yaml');
    expect(refusal(listed.repo).details?.problems).toEqual([
      expect.stringMatching(/^checks\.0\.command \(check test\): holds bytes that are not UTF-8 \(read as U\+FFFD: "pytest -k r\ufffdsum\ufffd"\)/),
      expect.stringMatching(/^models\.hard: holds bytes that are not UTF-8/),
    ]);
    const commented = repoWith(latin1('# r<e9>sum<e9> of the checks\nchecks:\n  test: npm test\n'), 'config.yaml');
    expect(loadProjectConfig(commented.repo).checks).toEqual([{ name: 'test', command: 'npm test' }]);
    // A U+FFFD the file really holds, as UTF-8, is the owner's to write.
    const written = repoWith(JSON.stringify({ checks: { test: 'echo \ufffd' } }));
    expect(loadProjectConfig(written.repo).checks).toEqual([{ name: 'test', command: 'echo \ufffd' }]);
  });

  it('does not read a config that links out of the repository, and quotes nothing of where it leads', () => {
    const { repo, file } = repoWith('{}');
    const secret = join(mkdtempSync(join(tmpdir(), 'maestro-secret-')), 'id_rsa');
    repos.push(dirname(secret));
    writeFileSync(secret, 'SECRETKEYMATERIAL\n');
    rmSync(file);
    symlinkSync(secret, file);
    const err = refusal(repo);
    expect(err).toMatchObject({ code: 'CONFIG_INVALID', message: `${file} leads out of the repository (to ${realpathSync(secret)}); a project's settings are its own files, so it was not read` });
    expect(err.message).not.toContain('SECRET');
    // A link inside the repository is read as its target.
    writeFileSync(join(repo, 'maestro.json'), JSON.stringify({ checks: { test: 'npm test' } }));
    rmSync(file);
    symlinkSync('../maestro.json', file);
    expect(loadProjectConfig(repo).checks).toEqual([{ name: 'test', command: 'npm test' }]);
  });

  it('refuses a timeout longer than a Node timer holds, naming the file, each field and the limit (it fired after 1 ms)', () => {
    const { repo, file } = repoWith(JSON.stringify({
      checks: [{ name: 'test', command: 'sleep 1; echo ok', timeoutMs: 3_000_000_000 }],
      limits: { agentTimeoutMs: 2_592_000_000, checkTimeoutMs: 2_147_483_648 },
    }));
    const err = refusal(repo);
    expect(err.code).toBe('CONFIG_INVALID');
    expect(err.message).toContain(file);
    const limit = 'must be at most 2147483647 ms (about 24.8 days), the longest a Node timer holds';
    expect(err.details?.problems).toEqual([`limits.agentTimeoutMs: ${limit}`, `limits.checkTimeoutMs: ${limit}`, `checks.0.timeoutMs: ${limit}`]);
    // The limit itself is a timeout Node keeps.
    const most = repoWith(JSON.stringify({ checks: [{ name: 'test', command: 'true', timeoutMs: 2_147_483_647 }], limits: { agentTimeoutMs: 2_147_483_647 } }));
    expect(loadProjectConfig(most.repo)).toMatchObject({ checks: [{ timeoutMs: 2_147_483_647 }], limits: { agentTimeoutMs: 2_147_483_647 } });
  });

  it('says on which line and column a JSON syntax error is, and quotes nothing of the file', () => {
    const { repo, file } = repoWith('{\n  "checks": {\n    "test": "npm test",\n  }\n}\n');
    expect(refusal(repo)).toMatchObject({ code: 'CONFIG_INVALID', message: `${file} is not valid JSON (line 4, column 3).` });
    // JSON.parse's own message would have quoted the file's first characters: `Unexpected token 'T', "TOPSECRET"...`.
    const secret = repoWith('TOPSECRET-1234\n');
    const err = refusal(secret.repo);
    expect(err.message).toBe(`${secret.file} is not valid JSON (line 1, column 1).`);
    expect(JSON.stringify({ ...err, cause: String(err.cause) })).not.toContain('TOPSECRET');
  });

  it('says on which line and column a YAML syntax error is, and quotes nothing of the file', () => {
    // The yaml package's message would have quoted the line under a caret: `TOPSECRET-1234: a: b\n                ^`.
    const { repo, file } = repoWith('TOPSECRET-1234: a: b\n', 'config.yaml');
    const err = refusal(repo);
    expect([err.code, err.message]).toEqual(['CONFIG_INVALID', `${file} is not valid YAML (line 1, column 17).`]);
    expect(JSON.stringify({ ...err, cause: String(err.cause) })).not.toContain('TOPSECRET');
    const cut = repoWith('checks:\n  test: "npm test\n', 'config.yml');
    expect(refusal(cut.repo).message).toBe(`${cut.file} is not valid YAML (line 3, column 1).`);
  });

  it("prints no YAML warning, which would quote the line to the worker's stderr", () => {
    const warned = vi.spyOn(process, 'emitWarning').mockImplementation(() => {});
    try {
      const { repo } = repoWith('checks:\n  test: !shell TOPSECRET-1234\n', 'config.yaml');
      expect(loadProjectConfig(repo).checks).toMatchObject([{ name: 'test', command: 'TOPSECRET-1234' }]);
      expect(warned).not.toHaveBeenCalled();
    } finally {
      warned.mockRestore();
    }
  });
});
