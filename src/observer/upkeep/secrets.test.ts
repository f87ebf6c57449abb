/**
 * Secrets a wiki already holds (written before the observer redacted as it read):
 * `wiki lint` names the file, the line and the kind of each, and of each name that
 * holds one, without ever showing it; `wiki redact` replaces exactly those spans,
 * keeps every other byte and the file's mode, and does nothing the second time.
 */
import { chmodSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { tempDir, writeEntry, type TempDir } from '../__fixtures__/transcript-builder.js';
import { redactDeep } from '../../core/redact.js';
import { listWikiEntries } from '../../knowledge/format/wiki/entries.js';
import { rebuildKnowledgeIndex } from '../wiki/log.js';
import { lintWiki } from './lint.js';
import { redactWiki } from './redact.js';

const SECRETS = {
  github: 'ghp_16C7e42F292c6912E7710c838347Ae178B4a',
  awsSecret: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
  anthropic: 'sk-ant-api03-Zx9AbCdEfGhIjKlMnOpQrStUvWxYz0123456789',
  dbPassword: 'hunter2-Prod',
  pem: 'MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7',
  inName: 'sk-proj-abcdefghijklmnopqrstuvwx1234',
};
const ALL = Object.values(SECRETS);

let dir: TempDir;
let wiki: string;
beforeEach(() => {
  dir = tempDir();
  wiki = join(dir.path, 'wiki');
});
afterEach(() => dir.cleanup());

const T0 = new Date('2026-11-20T10:00:00.000Z');

/** An entry as an older writer left it: a key in the request (frontmatter), an env dump in the body, a key this code does not know. */
function leakyEntry(): string {
  return writeEntry(
    wiki,
    'contexts/debug/C001-deploy.md',
    { id: '"C001"', request: `"Deploy with ${SECRETS.github} as the token"`, tags: ['proj:app'], reviewer_note: '"checked by ann"' },
    `## 摘要\n\nSet the keys first.\n\n## 命令\n\n\`\`\`bash\nexport AWS_SECRET_ACCESS_KEY=${SECRETS.awsSecret}\nnpm run deploy\n\`\`\`\n`,
  );
}

/** A session bundle (0600) whose strings hold secrets, one right before an escaped quote. */
function leakyBundle(): { path: string; value: unknown } {
  const value = {
    schemaVersion: 1,
    meta: { sessionId: 's1', workspaceRoot: dir.path, jsonlPath: join(dir.path, 's1.jsonl'), jsonlMtime: 1, updatedAt: 1 },
    explorations: {
      exp_1: {
        explorationId: 'exp_1',
        question: `why does ${SECRETS.anthropic} fail`,
        summary: { text: `psql postgres://admin:${SECRETS.dbPassword}@db/prod said "ok"`, source: 'ai', status: 'ready', savedAt: 1 },
        preview: `cat key.pem → -----BEGIN PRIVATE KEY-----\n${SECRETS.pem}`,
      },
    },
  };
  const path = join(wiki, 'sessions/s1/bundle.json');
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, `${JSON.stringify(value, null, 2)}\n`, { mode: 0o600 });
  return { path, value };
}

function snapshot(): Record<string, { text: string; mode: number; mtimeMs: number }> {
  const walk = (d: string): string[] => readdirSync(d, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(join(d, e.name)) : [join(d, e.name)]));
  return Object.fromEntries(walk(wiki).map((f) => [f, { text: readFileSync(f, 'utf8'), mode: statSync(f).mode & 0o7777, mtimeMs: statSync(f).mtimeMs }]));
}

describe('wiki lint: secrets', () => {
  it('names the file, line and kind of each secret in an entry body, its frontmatter, a bundle and a file name, and never the secret', () => {
    const entry = leakyEntry();
    const bundle = leakyBundle();
    writeEntry(wiki, `contexts/debug/C002-${SECRETS.inName}.md`, { id: '"C002"', request: '"A slug made from a pasted key"' }, '## 摘要\n\nx\n');
    const { errors } = lintWiki(wiki, T0);
    const secrets = errors.filter((e) => e.code === 'secret').map((e) => [e.path, e.line, e.kind]);
    expect(secrets).toEqual([
      [entry, 3, 'github-token'],
      [entry, 16, 'secret'],
      [bundle.path, 13, 'anthropic-key'],
      [bundle.path, 15, 'url-password'],
      [bundle.path, 20, 'private-key'],
    ]);
    const named = errors.filter((e) => e.code === 'secret_in_name');
    expect(named).toEqual([expect.objectContaining({ path: join(wiki, 'knowledge/contexts/debug/C002-[redacted: openai-key].md'), kind: 'openai-key' })]);
    expect(named[0]!.message).toContain('rename it by hand');
    // The other findings about that file (it is not in index.md) show its path redacted too.
    expect(errors.filter((e) => e.code === 'not_in_index').map((e) => e.path)).toContain(named[0]!.path);
    const printed = JSON.stringify(lintWiki(wiki, T0));
    for (const s of ALL) expect(printed).not.toContain(s);
  });

  it('finds nothing in clean files, nor in what wiki redact left', () => {
    writeEntry(wiki, 'contexts/debug/C002-login.md', { id: '"C002"', request: '"Fix login token expiry"', tags: ['proj:app'] }, '## 摘要\n\nconst token = await getToken(); MAX_TOKENS=4096\n');
    rebuildKnowledgeIndex(wiki, listWikiEntries(wiki).entries, T0);
    expect(lintWiki(wiki, T0).errors).toEqual([]);
    leakyEntry();
    leakyBundle();
    // index.md repeats the request, key and all.
    rebuildKnowledgeIndex(wiki, listWikiEntries(wiki).entries, T0);
    expect(lintWiki(wiki, T0).errors.filter((e) => e.code === 'secret').map((e) => [e.path, e.kind])).toContainEqual([join(wiki, 'knowledge/index.md'), 'github-token']);
    redactWiki(wiki, { dryRun: false, now: T0 });
    expect(lintWiki(wiki, T0).errors).toEqual([]);
  });
});

describe('wiki redact', () => {
  it('replaces exactly the secret spans, keeps every other byte, unknown keys and the mode, and is idempotent', () => {
    const entry = leakyEntry();
    chmodSync(entry, 0o664); // group-writable: a 022 umask takes that bit off a new file unless it is set after creation
    const bundle = leakyBundle();
    const before = readFileSync(entry, 'utf8');

    const result = redactWiki(wiki, { dryRun: false, now: T0 });
    expect(result.files.map((f) => [f.path, f.hits.length, f.written])).toEqual([
      [entry, 2, true],
      [bundle.path, 3, true],
    ]);
    const after = readFileSync(entry, 'utf8');
    expect(after).toBe(before.replace(SECRETS.github, '[redacted: github-token]').replace(SECRETS.awsSecret, '[redacted: secret]'));
    expect(after).toContain('reviewer_note: "checked by ann"');
    // The bundle is still JSON, byte for byte what redactDeep gives (keys included), and still 0600.
    expect(readFileSync(bundle.path, 'utf8')).toBe(`${JSON.stringify(redactDeep(bundle.value), null, 2)}\n`);
    expect(JSON.parse(readFileSync(bundle.path, 'utf8')).explorations.exp_1.summary.text).toBe('psql postgres://admin:[redacted: url-password]@db/prod said "ok"');
    expect(statSync(bundle.path).mode & 0o777).toBe(0o600);
    expect(statSync(entry).mode & 0o777).toBe(0o664);
    expect(readFileSync(join(wiki, 'knowledge/log/2026-11-20.md'), 'utf8')).toContain('compile · target: wiki · reason: redacted 5 secret(s) in 2 file(s)');
    for (const s of ALL) expect(JSON.stringify(result)).not.toContain(s);

    const settled = snapshot();
    const again = redactWiki(wiki, { dryRun: false, now: T0 });
    expect(again.files).toEqual([]);
    expect(snapshot()).toEqual(settled);
  });

  it('dry run lists file, line and kind and writes nothing', () => {
    const entry = leakyEntry();
    leakyBundle();
    const untouched = snapshot();
    const plan = redactWiki(wiki, { dryRun: true, now: T0 });
    expect(plan.files[0]).toEqual({ path: entry, written: false, hits: [{ line: 3, kind: 'github-token' }, { line: 16, kind: 'secret' }] });
    expect(plan.files.map((f) => f.written)).toEqual([false, false]);
    expect(snapshot()).toEqual(untouched);
  });

  it('reads a file again when it changed under the rewrite (the observer patching a bundle), keeping that change', () => {
    const bundle = leakyBundle();
    let patched = 0;
    const result = redactWiki(wiki, {
      dryRun: false,
      now: T0,
      beforeRename: (path) => {
        if (path !== bundle.path || patched++) return;
        // Between our read and our rename another writer puts a newer bundle in place.
        writeFileSync(path, readFileSync(path, 'utf8').replace('"updatedAt": 1', '"updatedAt": 2'));
      },
    });
    expect(patched).toBe(2);
    expect(result.files).toEqual([expect.objectContaining({ path: bundle.path, written: true })]);
    const after = JSON.parse(readFileSync(bundle.path, 'utf8'));
    expect(after.meta.updatedAt).toBe(2);
    expect(after.explorations.exp_1.question).toBe('why does [redacted: anthropic-key] fail');
    expect(readdirSync(dirname(bundle.path))).toEqual(['bundle.json']);
  });

  it('redacts a value under a frontmatter key that names a secret, and keeps every quoted value quoted', () => {
    const path = writeEntry(wiki, 'entities/N001-ci.md', { id: '"N001"', request: `"set PASSWORD=\\"\\" then push with ${SECRETS.github}"`, DEPLOY_TOKEN: '"abc123"' }, '');
    const result = redactWiki(wiki, { dryRun: false, now: T0 });
    expect(result.files[0]!.hits).toEqual([
      { line: 3, kind: 'github-token' },
      { line: 4, kind: 'secret' },
    ]);
    expect(readFileSync(path, 'utf8')).toBe('---\nid: "N001"\nrequest: "set PASSWORD=\\"\\" then push with [redacted: github-token]"\nDEPLOY_TOKEN: [redacted: secret]\n---\n\n');
    expect(listWikiEntries(wiki).entries[0]!.request).toBe('set PASSWORD="" then push with [redacted: github-token]');
  });

  it('ends a private key cut short at its section, leaves a name for the person to rename, and refuses a missing wiki', () => {
    const path = writeEntry(wiki, `notes-${SECRETS.inName}.md`, { id: '"N001"', request: '"key"' }, `## 命令\n\n-----BEGIN RSA PRIVATE KEY-----\n${SECRETS.pem}\n\n## 参考\n\n- docs/keys.md\n`);
    const result = redactWiki(wiki, { dryRun: false, now: T0 });
    expect(readFileSync(path, 'utf8')).toBe('---\nid: "N001"\nrequest: "key"\n---\n\n## 命令\n\n[redacted: private-key]\n\n## 参考\n\n- docs/keys.md\n');
    expect(result.names).toEqual([{ path: join(wiki, 'knowledge/notes-[redacted: openai-key].md'), kinds: ['openai-key'], isDirectory: false }]);
    expect(readdirSync(join(wiki, 'knowledge'))).toContain(`notes-${SECRETS.inName}.md`);
    expect(() => redactWiki(join(dir.path, 'nowhere'), { dryRun: true, now: T0 })).toThrow(`No wiki folder at ${join(dir.path, 'nowhere')}`);
  });
});
