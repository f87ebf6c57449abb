/**
 * Secrets a wiki already holds (written before the observer redacted as it read):
 * `wiki lint` names the file, the line and the kind of each, and of each name that
 * holds one, without ever showing it.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { tempDir, writeEntry, type TempDir } from '../__fixtures__/transcript-builder.js';
import { listWikiEntries } from '../../knowledge/format/wiki/entries.js';
import { rebuildKnowledgeIndex } from '../wiki/log.js';
import { lintWiki } from './lint.js';

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

  it('finds nothing in clean files', () => {
    writeEntry(wiki, 'contexts/debug/C002-login.md', { id: '"C002"', request: '"Fix login token expiry"', tags: ['proj:app'] }, '## 摘要\n\nconst token = await getToken(); MAX_TOKENS=4096\n');
    rebuildKnowledgeIndex(wiki, listWikiEntries(wiki).entries, T0);
    expect(lintWiki(wiki, T0).errors).toEqual([]);
    leakyEntry();
    leakyBundle();
    // index.md repeats the request, key and all.
    rebuildKnowledgeIndex(wiki, listWikiEntries(wiki).entries, T0);
    expect(lintWiki(wiki, T0).errors.filter((e) => e.code === 'secret').map((e) => [e.path, e.kind])).toContainEqual([join(wiki, 'knowledge/index.md'), 'github-token']);
  });
});
