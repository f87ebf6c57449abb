import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Fastify from 'fastify';
import { installErrorHandler } from '../../api/errors.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { tempDir, TranscriptBuilder, writeEntry, type TempDir } from '../__fixtures__/transcript-builder.js';
import { observerRoutes } from '../../api/routes/observer.js';
import { ObserverSession } from '../session.js';
import { listWikiEntries } from '../../knowledge/format/wiki/entries.js';
import type { CuratorInput } from './curator.js';
import { listProposals, newFacts, proposalsDir } from './proposals.js';

let dir: TempDir;
let wiki: string;
beforeEach(() => {
  dir = tempDir();
  wiki = join(dir.path, 'wiki');
});
afterEach(() => dir.cleanup());

function seedNginx(): string {
  return writeEntry(
    wiki,
    'contexts/devops/C001-nginx-websocket.md',
    { id: '"C001"', slug: '"nginx-websocket"', request: '"Configure the nginx reverse proxy for websockets"', version: '1', tags: ['proj:app', 'devops'], extraction_confidence: '0.9', status: '"draft"' },
    '# nginx websockets\n\n## 摘要\n\nUpgrade headers.\n\n## 解决方案\n\nAdd proxy_set_header Upgrade and Connection to the location block.\n',
  );
}

/** A devops question answered with a fact the entry does not have, then a pivot so the intent closes. */
function nginxSession(jsonl: string, answer: string): number {
  const b = new TranscriptBuilder(Date.parse('2026-11-20T10:00:00.000Z'));
  b.user('Configure the nginx reverse proxy for websockets').turn({ tools: [{ name: 'Edit', input: { file_path: 'deploy/nginx.conf' } }], answer });
  b.user('Write the release notes for 2.3').turn({ tools: [{ name: 'Write', input: { file_path: 'CHANGELOG.md' } }], answer: 'Written.' });
  b.writeTo(jsonl);
  return b.clock + 60_000;
}

describe('newFacts', () => {
  it('keeps the solution lines the entry does not already say, ignoring bullets, case and spacing', () => {
    const body = '## 解决方案\n\nAdd proxy_set_header Upgrade and Connection to the location block.\n';
    expect(newFacts({ solution: '- add  proxy_set_header upgrade and connection to the location block.\n- Raise proxy_read_timeout to 3600s for idle sockets.\nCommands:\n- ok' }, { body })).toEqual(['Raise proxy_read_timeout to 3600s for idle sockets.']);
  });
});

describe('dedup keeps a genuinely new fact', () => {
  it('a create that dedup would drop as similar becomes a merge proposal, which the board accepts over HTTP', async () => {
    const path = seedNginx();
    const before = readFileSync(path, 'utf8');
    const jsonl = join(dir.path, 's1.jsonl');
    const now = nginxSession(jsonl, 'Raise proxy_read_timeout to 3600s, or idle websockets drop after 60 s.');
    // The agent asks for a create; dedup finds C001 similar, but the answer adds a fact C001 lacks.
    const curate = async (input: CuratorInput) => (input.digest.intentKey === 'devops' ? { action: 'create' as const, reason: 'agent' } : { action: 'skip' as const, reason: 'not reusable' });
    const s = new ObserverSession({ sessionId: 's1', jsonlPath: jsonl, wikiRoot: wiki, workspaceRoot: dir.path, projectSlug: 'app', now: () => now, curate });
    s.readOnce();
    const step = await s.step();
    expect(step.curated[0]).toMatchObject({ intentKey: 'devops', status: 'skipped', reason: 'proposed_dedup_new_fact', targetId: 'C001' });
    expect(readFileSync(path, 'utf8')).toBe(before);
    expect(listWikiEntries(wiki).entries.map((e) => e.id)).toEqual(['C001']);
    const [proposal] = listProposals(wiki).open;
    expect(proposal).toMatchObject({ kind: 'merge', reason: 'dedup_new_fact', targetId: 'C001', targetPath: 'contexts/devops/C001-nginx-websocket.md' });
    expect(proposal!.newFacts.join(' ')).toContain('Raise proxy_read_timeout to 3600s');

    const app = Fastify();
    installErrorHandler(app, () => {}); // the API's one error handler, as the daemon installs it
    await observerRoutes(app, { wikiRoot: wiki, workspaceRoot: dir.path, projectSlug: 'app', now: () => now });
    try {
      const list = await app.inject({ method: 'GET', url: '/api/observer/proposals' });
      expect(list.json().open.map((p: { id: string }) => p.id)).toEqual([proposal!.id]);
      const bad = await app.inject({ method: 'POST', url: '/api/observer/proposals/nope/accept', payload: {} });
      expect(bad.statusCode).toBe(400);
      expect(bad.json().error.message).toBe('Invalid path parameters: id: must be a proposal id (P-<time>-<entry id>)');
      const unknown = await app.inject({ method: 'POST', url: '/api/observer/proposals/P-20260101T000000Z-C404/accept', payload: {} });
      expect(unknown.statusCode).toBe(404);
      expect(unknown.json().error).toMatchObject({ code: 'NOT_FOUND', message: `No proposal P-20260101T000000Z-C404 in ${proposalsDir(wiki)}.` });
      const accepted = await app.inject({ method: 'POST', url: `/api/observer/proposals/${proposal!.id}/accept`, payload: { note: 'true for our proxy' } });
      expect(accepted.statusCode, accepted.body).toBe(200);
      expect(accepted.json()).toMatchObject({ proposal: { status: 'accepted', note: 'true for our proxy' }, entry: { id: 'C001' } });
      const entry = readFileSync(path, 'utf8');
      expect(entry).toMatch(/^version: 2$/m);
      expect(entry).toContain('Raise proxy_read_timeout to 3600s');
      expect(entry).toContain('Add proxy_set_header Upgrade and Connection');
      const again = await app.inject({ method: 'POST', url: `/api/observer/proposals/${proposal!.id}/dismiss`, payload: {} });
      expect(again.statusCode).toBe(409);
      expect(again.json().error).toMatchObject({ code: 'ILLEGAL_TRANSITION', message: `Proposal ${proposal!.id} is already closed (accepted or dismissed); nothing was changed.` });
    } finally {
      await app.close();
    }
  });

  it('without an agent an update the entry already holds is skipped (no_new_facts), and a dismissed proposal changes nothing', async () => {
    const path = seedNginx();
    const before = readFileSync(path, 'utf8');
    const jsonl = join(dir.path, 's2.jsonl');
    const now = nginxSession(jsonl, 'Set a longer proxy_read_timeout for idle websockets.');
    const s = new ObserverSession({ sessionId: 's2', jsonlPath: jsonl, wikiRoot: wiki, workspaceRoot: dir.path, projectSlug: 'app', now: () => now });
    s.readOnce();
    const step = await s.step();
    expect(step.curated[0]).toMatchObject({ status: 'skipped', reason: 'proposed_no_agent', targetId: 'C001' });
    const id = listProposals(wiki).open[0]!.id;
    const app = Fastify();
    installErrorHandler(app, () => {}); // the API's one error handler, as the daemon installs it
    await observerRoutes(app, { wikiRoot: wiki, workspaceRoot: dir.path });
    try {
      const dismissed = await app.inject({ method: 'POST', url: `/api/observer/proposals/${id}/dismiss`, payload: {} });
      expect(dismissed.json()).toMatchObject({ proposal: { status: 'dismissed' } });
    } finally {
      await app.close();
    }
    expect(readFileSync(path, 'utf8')).toBe(before);
    expect(listProposals(wiki)).toMatchObject({ open: [], closed: [{ id, status: 'dismissed' }] });
  });

  it('a proposal file it does not understand is reported and left alone', () => {
    mkdirSync(proposalsDir(wiki), { recursive: true });
    writeFileSync(join(proposalsDir(wiki), 'P-x.json'), '{"schemaVersion":3}');
    writeFileSync(join(proposalsDir(wiki), 'P-y.json'), '{oops');
    const { open, problems } = listProposals(wiki);
    expect(open).toEqual([]);
    expect(problems.map((p) => [p.file.split('/').pop(), p.reason.split(' (')[0]!.split(':')[0]])).toEqual([
      ['P-x.json', 'not a schemaVersion 1 proposal'],
      ['P-y.json', 'not valid JSON'],
    ]);
    expect(readFileSync(join(proposalsDir(wiki), 'P-x.json'), 'utf8')).toBe('{"schemaVersion":3}');
  });

  it('a proposal file with a field missing or of another type is reported naming the file and the field; the others list and accept as before, their unknown keys kept', async () => {
    const path = seedNginx();
    const before = readFileSync(path, 'utf8');
    mkdirSync(proposalsDir(wiki), { recursive: true });
    const filed = (id: string, at: string, change: (p: Record<string, unknown>) => void = () => {}) => {
      const p: Record<string, unknown> = {
        schemaVersion: 1, id, status: 'open', kind: 'update', reason: 'no_agent', targetId: 'C001', targetPath: 'contexts/devops/C001-nginx-websocket.md',
        targetRequest: 'Configure the nginx reverse proxy for websockets', filedAt: at, source: { sessionId: 's1', explorationId: 'exp_1' },
        newFacts: ['Raise proxy_read_timeout to 3600s for idle sockets.'], draft: { solution: 'Raise proxy_read_timeout to 3600s for idle sockets.', tags: ['nginx'] },
      };
      change(p);
      writeFileSync(join(proposalsDir(wiki), `${id}.json`), JSON.stringify(p));
      return join(proposalsDir(wiki), `${id}.json`);
    };
    const good = filed('P-2026-11-20T10-00-00-000Z-C001', '2026-11-20T10:00:00.000Z', (p) => Object.assign(p, { gaNote: 'kept', draft: { ...(p.draft as object), by: 'GA' } }));
    const noFiledAt = filed('P-2026-11-20T10-01-00-000Z-C001', '', (p) => delete p.filedAt);
    const noSource = filed('P-2026-11-20T10-02-00-000Z-C001', '2026-11-20T10:02:00.000Z', (p) => delete p.source);
    const numberSolution = filed('P-2026-11-20T10-03-00-000Z-C001', '2026-11-20T10:03:00.000Z', (p) => (p.draft = { solution: 5 }));
    const stringTags = filed('P-2026-11-20T10-04-00-000Z-C001', '2026-11-20T10:04:00.000Z', (p) => (p.draft = { solution: 'Use HTTP/1.1 to the upstream for websockets.', tags: 'abc' }));
    const bad = [noFiledAt, noSource, numberSolution, stringTags];
    const texts = bad.map((f) => readFileSync(f, 'utf8'));

    const { open, problems } = listProposals(wiki);
    expect(open.map((p) => p.id)).toEqual(['P-2026-11-20T10-00-00-000Z-C001']);
    expect(problems.map((p) => [p.file, p.reason]).sort()).toEqual([
      [noFiledAt, 'not a valid proposal: filedAt: Invalid input: expected string, received undefined; left as it is'],
      [noSource, 'not a valid proposal: source: Invalid input: expected object, received undefined; left as it is'],
      [numberSolution, 'not a valid proposal: draft.solution: Invalid input: expected string, received number; left as it is'],
      [stringTags, 'not a valid proposal: draft.tags: Invalid input: expected array, received string; left as it is'],
    ]);

    const app = Fastify();
    installErrorHandler(app, () => {});
    await observerRoutes(app, { wikiRoot: wiki, workspaceRoot: dir.path, projectSlug: 'app', now: () => Date.parse('2026-11-21T09:00:00.000Z') });
    try {
      for (const [file, field] of [[numberSolution, 'draft.solution'], [stringTags, 'draft.tags']] as const) {
        const id = file.split('/').pop()!.replace(/\.json$/, '');
        const res = await app.inject({ method: 'POST', url: `/api/observer/proposals/${id}/accept`, payload: {} });
        expect(res.statusCode).toBe(500);
        expect(res.json().error).toMatchObject({ code: 'CORRUPT_FILE', message: expect.stringMatching(new RegExp(`^${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: not a valid proposal: ${field.replace('.', '\\.')}: .*; it was left as it is\\.$`)) });
      }
      expect(readFileSync(path, 'utf8')).toBe(before); // no tags a, b, c; no "5"
      expect(bad.map((f) => readFileSync(f, 'utf8'))).toEqual(texts);
      const accepted = await app.inject({ method: 'POST', url: '/api/observer/proposals/P-2026-11-20T10-00-00-000Z-C001/accept', payload: {} });
      expect(accepted.statusCode, accepted.body).toBe(200);
      // The answer has the proposal's own fields (the API's shape); the file keeps the rest.
      expect(accepted.json().proposal).not.toHaveProperty('gaNote');
      expect(accepted.json().proposal.draft).toEqual({ solution: 'Raise proxy_read_timeout to 3600s for idle sockets.', tags: ['nginx'] });
    } finally {
      await app.close();
    }
    expect(readFileSync(path, 'utf8')).toContain('Raise proxy_read_timeout to 3600s');
    expect(JSON.parse(readFileSync(join(proposalsDir(wiki), 'closed', `${good.split('/').pop()}`), 'utf8'))).toMatchObject({ status: 'accepted', gaNote: 'kept', draft: { by: 'GA' } });
  });

  it('accepting a proposal whose file no longer parses answers 500 CORRUPT_FILE naming it and the place, and leaves it alone', async () => {
    mkdirSync(proposalsDir(wiki), { recursive: true });
    const id = 'P-20260101T000000Z-C001';
    const path = join(proposalsDir(wiki), `${id}.json`);
    writeFileSync(path, '{oops');
    const app = Fastify();
    installErrorHandler(app, () => {});
    await observerRoutes(app, { wikiRoot: wiki, workspaceRoot: dir.path });
    try {
      const res = await app.inject({ method: 'POST', url: `/api/observer/proposals/${id}/accept`, payload: {} });
      expect(res.statusCode).toBe(500);
      expect(res.json().error).toMatchObject({ code: 'CORRUPT_FILE', message: `${path}: not valid JSON (line 1, column 2); it was left as it is.` });
      // JSON.parse's own message would quote the start of the file: `Unexpected token 'T', "TOPSECRET-1234" is not valid JSON`.
      writeFileSync(path, 'TOPSECRET-1234\n');
      const secret = await app.inject({ method: 'POST', url: `/api/observer/proposals/${id}/dismiss`, payload: {} });
      expect(secret.json().error).toMatchObject({ code: 'CORRUPT_FILE', message: `${path}: not valid JSON (line 1, column 1); it was left as it is.` });
      expect(secret.body).not.toContain('TOPSECRET');
    } finally {
      await app.close();
    }
    expect(readFileSync(path, 'utf8')).toBe('TOPSECRET-1234\n');
    // The listing (the board's, the API's) reports it the same way.
    expect(listProposals(wiki).problems).toEqual([{ file: path, reason: 'not valid JSON (line 1, column 1); left as it is' }]);
  });
});
