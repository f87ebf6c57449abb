/**
 * `maestro wiki lint` and `maestro wiki redact`, as processes, on a wiki written
 * before the observer redacted secrets: lint names each (file, line, kind) and
 * exits 1, redact --dry-run lists them and changes nothing, redact rewrites them,
 * a second redact has nothing to do; no output, text or --json, shows a secret.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { tempDir, writeEntry, type TempDir } from '../../src/observer/__fixtures__/transcript-builder.js';
import { budget } from '../helpers/budget.js';
import { maestroArgs } from '../helpers/maestro.js';

const run = promisify(execFile);
const TOKEN = 'ghp_16C7e42F292c6912E7710c838347Ae178B4a';
const AWS_SECRET = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY';
const IN_NAME = 'sk-proj-abcdefghijklmnopqrstuvwx1234';

let dir: TempDir;
let wiki: string;
beforeEach(() => {
  dir = tempDir();
  wiki = join(dir.path, 'wiki');
});
afterEach(() => dir.cleanup());

async function maestro(args: string[], wikiDir = wiki): Promise<{ code: number; stdout: string; stderr: string }> {
  const env = { ...process.env, FLOW_WIKI_DIR: wikiDir, FLOW_ROOT_DIR: '', FLOW_PROJECT_DIR: '' };
  try {
    const { stdout, stderr } = await run(process.execPath, [...maestroArgs(), ...args], { cwd: dir.path, env });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

function expectNoSecret(out: { stdout: string; stderr: string }): void {
  for (const s of [TOKEN, AWS_SECRET, IN_NAME]) expect(`${out.stdout}${out.stderr}`).not.toContain(s);
}

describe('maestro wiki lint / redact, as processes', () => {
  it('lint reports each secret, redact --dry-run lists them, redact rewrites them once; nothing prints a secret', async () => {
    const entry = writeEntry(wiki, 'contexts/debug/C001-deploy.md', { id: '"C001"', request: `"Deploy with ${TOKEN}"` }, `## 命令\n\nexport AWS_SECRET_ACCESS_KEY=${AWS_SECRET}\n`);
    const bundle = join(wiki, 'sessions/s1/bundle.json');
    mkdirSync(dirname(bundle), { recursive: true });
    writeFileSync(bundle, `${JSON.stringify({ schemaVersion: 1, explorations: { exp_1: { question: `push with ${TOKEN}` } } }, null, 2)}\n`, { mode: 0o600 });
    const before = { entry: readFileSync(entry, 'utf8'), bundle: readFileSync(bundle, 'utf8') };

    const lint = await maestro(['wiki', 'lint', '--json']);
    expect(lint.code).toBe(1);
    const secrets = JSON.parse(lint.stdout).errors.filter((e: { code: string }) => e.code === 'secret');
    expect(secrets.map((e: { path: string; line: number; kind: string }) => [e.path, e.line, e.kind])).toEqual([
      [entry, 3, 'github-token'],
      [entry, 8, 'secret'],
      [bundle, 5, 'github-token'],
    ]);
    expectNoSecret(lint);
    const lintText = await maestro(['wiki', 'lint']);
    expect(lintText.stdout).toContain(`error secret: ${entry}:8: holds a secret (secret)`);
    expectNoSecret(lintText);

    const plan = await maestro(['wiki', 'redact', '--dry-run', '--json']);
    expect(plan.code).toBe(1); // the secrets are still there
    expect(JSON.parse(plan.stdout).files.map((f: { path: string; written: boolean }) => [f.path, f.written])).toEqual([
      [entry, false],
      [bundle, false],
    ]);
    expectNoSecret(plan);
    expect({ entry: readFileSync(entry, 'utf8'), bundle: readFileSync(bundle, 'utf8') }).toEqual(before);

    const done = await maestro(['wiki', 'redact', '--json']);
    expect(done.code, done.stderr).toBe(0);
    expect(JSON.parse(done.stdout)).toMatchObject({ dryRun: false, names: [], files: [{ path: entry, written: true }, { path: bundle, written: true }] });
    expect(readFileSync(entry, 'utf8')).toBe(before.entry.replace(TOKEN, '[redacted: github-token]').replace(AWS_SECRET, '[redacted: secret]'));
    expect(readFileSync(bundle, 'utf8')).toBe(before.bundle.replace(TOKEN, '[redacted: github-token]'));
    expect(statSync(bundle).mode & 0o777).toBe(0o600);
    expectNoSecret(done);

    const again = await maestro(['wiki', 'redact', '--json']);
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout).files).toEqual([]);
    const clean = await maestro(['wiki', 'lint', '--json']);
    expect(JSON.parse(clean.stdout).errors.filter((e: { code: string }) => e.code.startsWith('secret'))).toEqual([]);
  }, budget(120_000));

  it('leaves a name that holds a secret for the person (exit 1, shown redacted) and refuses a wiki that does not exist', async () => {
    writeEntry(wiki, `contexts/debug/C001-${IN_NAME}.md`, { id: '"C001"', request: '"a slug from a pasted key"' }, '');
    const names = await maestro(['wiki', 'redact']);
    expect(names.code).toBe(1);
    expect(names.stdout).toContain(`${join(wiki, 'knowledge/contexts/debug/C001-[redacted: openai-key].md')}: the file name holds a secret (openai-key); rename it by hand`);
    expectNoSecret(names);

    const missing = join(dir.path, 'no-wiki');
    const refused = await maestro(['wiki', 'redact', '--json'], missing);
    expect(refused.code).toBe(2);
    expect(JSON.parse(refused.stdout).error).toMatchObject({ code: 'BAD_INPUT', message: expect.stringContaining(`No wiki folder at ${missing}`) });
  }, budget(60_000));
});
