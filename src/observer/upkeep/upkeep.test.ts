import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { tempDir, writeEntry, type TempDir } from '../__fixtures__/transcript-builder.js';
import { isMaestroError } from '../../core/errors.js';
import { loadBundle } from '../bundle/store.js';
import { listWikiEntries } from '../../knowledge/format/wiki/entries.js';
import { wikiLayout } from '../../knowledge/format/wiki/layout.js';
import { rebuildKnowledgeIndex } from '../wiki/log.js';
import { fileAudit, listAudits, resolveAudit } from './audit.js';
import { lintWiki } from './lint.js';
import { applyMaintenance, buildMaintenanceReport } from './maintain.js';
import { migrateWikiLayout } from './migrate.js';

let dir: TempDir;
let wiki: string;
beforeEach(() => {
  dir = tempDir();
  wiki = join(dir.path, 'wiki');
});
afterEach(() => dir.cleanup());

const T0 = new Date('2026-11-20T10:00:00.000Z');
const at = (minutes: number) => new Date(T0.getTime() + minutes * 60_000);

function seed(): void {
  writeEntry(wiki, 'contexts/debug/C001-login.md', { id: '"C001"', request: '"Fix login token expiry"', tags: ['proj:app'], updated: '"2026-11-20T09:00:00Z"' }, '## 摘要\n\nx\n');
  writeEntry(wiki, 'contexts/debug/C002-cache.md', { id: '"C002"', request: '"Cache invalidation on deploy"', tags: ['proj:app'], updated: '"2026-11-20T09:00:00Z"' }, '## 摘要\n\ny\n');
}

describe('audits', () => {
  it('files an audit in the §8.5 format, lists open ones by severity, and resolves into resolved/', () => {
    seed();
    const a = fileAudit(wiki, { targetId: 'C001', severity: 'low', sessionId: 's1', explorationId: 'exp_2' }, at(0));
    const b = fileAudit(wiki, { targetId: 'C002', severity: 'high', anchor: 'Says TTL is 60s; it is 3600s now.', notes: 'seen twice' }, at(1));
    expect(a.file).toBe('2026-11-20T10-00-00-000Z-C001.md');
    const text = readFileSync(a.path, 'utf8');
    // Exactly as GUI-Anything writes it: severity and status bare, the anchor right under its heading.
    expect(text).toBe(
      '---\ntarget_id: "C001"\nseverity: low\nfiled_at: "2026-11-20T10:00:00.000Z"\nsession_id: "s1"\nexploration_id: "exp_2"\nstatus: open\n---\n\n## Anchor\nKNOWLEDGE card C001 ("Fix login token expiry") was shown and judged wrong or not relevant.\n',
    );
    expect(listAudits(wiki).open.map((x) => [x.targetId, x.severity])).toEqual([
      ['C002', 'high'],
      ['C001', 'low'],
    ]);
    const done = resolveAudit(wiki, b.file, 'entry fixed', at(5));
    expect(done).toMatchObject({ status: 'resolved', resolvedAt: '2026-11-20T10:05:00.000Z', anchor: 'Says TTL is 60s; it is 3600s now.' });
    expect(existsSync(b.path)).toBe(false);
    const resolvedText = readFileSync(join(wikiLayout(wiki).auditResolved, b.file), 'utf8');
    expect(resolvedText.startsWith('---\nresolved_at: "2026-11-20T10:05:00.000Z"\n')).toBe(true);
    expect(resolvedText.match(/^status:/gm)).toEqual(['status:']);
    expect(resolvedText).toMatch(/^status: resolved$/m);
    expect(resolvedText).toMatch(/# Resolution\n\n2026-11-20 · entry fixed\n$/);
    expect(listAudits(wiki).open.map((x) => x.targetId)).toEqual(['C001']);
  });

  it('refuses a bad severity, an unknown target, and changes nothing', () => {
    seed();
    expect(() => fileAudit(wiki, { targetId: 'C001', severity: 'urgent' }, at(0))).toThrow(/--severity must be low, medium or high/);
    expect(() => fileAudit(wiki, { targetId: 'C001', anchor: 'wrong\n---\nstatus: resolved' }, at(0))).toThrow(/anchor \(--anchor\) must be one line/);
    try {
      fileAudit(wiki, { targetId: 'C404' }, at(0));
      expect.unreachable();
    } catch (err) {
      expect(isMaestroError(err, 'BAD_INPUT')).toBe(true);
    }
    expect(existsSync(wikiLayout(wiki).audit)).toBe(false);
  });
});

describe('resolving an audit whose frontmatter is never closed', () => {
  it('is refused naming the file and the line of the opening ---, and changes nothing', () => {
    seed();
    const { audit, auditResolved } = wikiLayout(wiki);
    mkdirSync(audit, { recursive: true });
    const file = '2026-11-20T10-00-00-000Z-C001.md';
    const path = join(audit, file);
    // The closing --- was lost (a hand edit): where the keys end would be a guess.
    const text = '\n---\ntarget_id: "C001"\nseverity: high\nstatus: open\n\n## Anchor\nSays TTL is 60s.\n';
    writeFileSync(path, text);
    try {
      resolveAudit(wiki, file, 'entry fixed', at(5));
      expect.unreachable();
    } catch (err) {
      expect(isMaestroError(err, 'CORRUPT_FILE')).toBe(true);
      expect((err as Error).message).toBe(`Cannot change audit ${path}:2: frontmatter opened with --- on line 2 is never closed (no --- line after it). Add the closing --- line by hand; nothing was written.`);
    }
    expect(readFileSync(path, 'utf8')).toBe(text);
    expect(existsSync(join(auditResolved, file))).toBe(false);
  });
});

describe('resolving an audit that does not say what it audits', () => {
  it.each([
    ['no frontmatter', '## Anchor\nSays TTL is 60s.\n', 'it has no frontmatter, so no target_id (the id of the wiki entry it audits)'],
    ['no target_id', '---\nseverity: high\nstatus: open\n---\n\n## Anchor\nSays TTL is 60s.\n', 'its frontmatter has no target_id (the id of the wiki entry it audits)'],
    ['a target_id that is no string', '---\ntarget_id: [C001]\nstatus: open\n---\n\n## Anchor\nSays TTL is 60s.\n', 'its target_id must be a string, the id of the wiki entry it audits (found ["C001"])'],
  ])('with %s is refused naming the file, and changes nothing', (_name, text, why) => {
    seed();
    const { audit, auditResolved } = wikiLayout(wiki);
    mkdirSync(audit, { recursive: true });
    const file = '2026-11-20T10-00-00-000Z-C001.md';
    const path = join(audit, file);
    writeFileSync(path, text);
    expect(() => resolveAudit(wiki, file, 'entry fixed', at(5))).toThrow(
      expect.objectContaining({ code: 'CORRUPT_FILE', message: `Cannot resolve audit ${path}: ${why}. Fix or remove the file by hand; nothing was written.`, details: { file: path } }),
    );
    expect(readFileSync(path, 'utf8')).toBe(text);
    expect(existsSync(join(auditResolved, file))).toBe(false);
  });
});

describe('lint', () => {
  it('reports ids, duplicates, legacy dirs, index drift and stale drafts', () => {
    seed();
    writeEntry(wiki, 'contexts/debug/C003-dup.md', { id: '"C001"', request: '"fix login token expiry"', tags: ['proj:app'] }, '');
    writeFileSync(join(wiki, 'knowledge/contexts/debug/C004-noid.md'), '---\nrequest: "no id here"\n---\n');
    writeEntry(wiki, 'entities/N001-old.md', { id: '"N001"', request: '"Old draft"', status: '"draft"', created: '"2026-09-01T00:00:00Z"', updated: '"2026-09-01T00:00:00Z"' }, '');
    mkdirSync(join(wiki, 'knowledge/errors'), { recursive: true });
    rebuildKnowledgeIndex(wiki, listWikiEntries(wiki).entries.filter((e) => e.id !== 'C002'), T0);
    const { errors, warnings } = lintWiki(wiki, T0);
    expect(errors.map((e) => e.code).sort()).toEqual(['duplicate_id', 'legacy_dir', 'missing_id', 'not_in_index']);
    expect(errors.find((e) => e.code === 'missing_id')!.message).toContain('C004-noid.md:1');
    expect(errors.find((e) => e.code === 'not_in_index')!.id).toBe('C002');
    expect(warnings.map((w) => w.code).sort()).toEqual(['duplicate_request', 'stale_draft']);
  });
});

describe('wiki maintain', () => {
  it('dry run reports; apply moves legacy folders to trash, rebuilds the index, resolves audits whose target changed or vanished', async () => {
    seed();
    fileAudit(wiki, { targetId: 'C001' }, at(0));
    fileAudit(wiki, { targetId: 'C002', severity: 'high' }, at(0));
    mkdirSync(join(wiki, 'knowledge/snippets'), { recursive: true });
    writeFileSync(join(wiki, 'knowledge/snippets/S-legacy.md'), 'keep me recoverable');
    const report = buildMaintenanceReport(wiki, dir.path, at(1));
    expect(report.openAudits).toHaveLength(2);
    expect(report.lint.errors.map((e) => e.code)).toContain('legacy_dir');
    expect(existsSync(join(wiki, 'knowledge/snippets'))).toBe(true);

    // C001 is edited after its audit was filed; C002 is not.
    writeEntry(wiki, 'contexts/debug/C001-login.md', { id: '"C001"', request: '"Fix login token expiry"', tags: ['proj:app'], updated: '"2026-11-20T10:30:00Z"' }, '## 摘要\n\nfixed\n');
    const result = await applyMaintenance(wiki, dir.path, { now: () => at(60) });
    expect(result.resolved.map((r) => r.targetId)).toEqual(['C001']);
    expect(result.remaining.map((r) => r.targetId)).toEqual(['C002']);
    expect(result.movedLegacy).toHaveLength(1);
    const trash = join(wiki, 'knowledge/.trash');
    expect(readFileSync(join(trash, readdirSync(trash)[0]!, 'snippets/S-legacy.md'), 'utf8')).toBe('keep me recoverable');
    expect(result.lint.errors).toEqual([]);
    expect(existsSync(join(wiki, 'knowledge/contexts/greeting'))).toBe(true);
    expect(readFileSync(join(wiki, 'knowledge/SCHEMA.md'), 'utf8')).toContain('Required frontmatter: id, slug, request');
    const log = readFileSync(join(wiki, 'knowledge/log/2026-11-20.md'), 'utf8');
    expect(log).toMatch(/audit · target: C001 · reason: resolved: target C001 updated/);

    // An agent may resolve what the rules left open.
    const agent = await applyMaintenance(wiki, dir.path, { now: () => at(61), maintain: async (r) => ({ resolve: r.openAudits.map((a) => ({ file: a.file, note: 'rewrote the cache entry' })) }) });
    expect(agent.resolved.map((r) => r.targetId)).toEqual(['C002']);
    expect(agent.remaining).toEqual([]);
  });
});

describe('wiki maintain with audits it cannot resolve', () => {
  it('resolves the rest and reports each one it could not (file and why), leaving it as it was', async () => {
    seed();
    const kept = fileAudit(wiki, { targetId: 'C001' }, at(0));
    const bare = fileAudit(wiki, { targetId: 'C002' }, at(1));
    const open = fileAudit(wiki, { targetId: 'C001', severity: 'low' }, at(2));
    const bareText = '## Anchor\nThe frontmatter was cut away.\n';
    const openText = '---\ntarget_id: "C001"\nstatus: open\n\n## Anchor\nThe closing line was cut away.\n';
    // The agent edits two audits between the report it is given and its answer.
    const result = await applyMaintenance(wiki, dir.path, {
      now: () => at(60),
      maintain: async () => {
        writeFileSync(bare.path, bareText);
        writeFileSync(open.path, openText);
        return { resolve: [kept, bare, open].map((a) => ({ file: a.file, note: 'rewrote the entry' })) };
      },
    });
    expect(result.resolved.map((r) => r.file)).toEqual([kept.file]);
    expect(result.unresolved).toEqual([
      { file: bare.file, error: `Cannot resolve audit ${bare.path}: it has no frontmatter, so no target_id (the id of the wiki entry it audits). Fix or remove the file by hand; nothing was written.` },
      { file: open.file, error: expect.stringContaining(`Cannot change audit ${open.path}:1: frontmatter opened with --- on line 1 is never closed`) },
    ]);
    expect(readFileSync(bare.path, 'utf8')).toBe(bareText);
    expect(readFileSync(open.path, 'utf8')).toBe(openText);
    expect(readdirSync(wikiLayout(wiki).auditResolved)).toEqual([kept.file]);
  });
});

describe('audit files that are no audit', () => {
  it('are named with why (no frontmatter, no target, not a string, not a file), not passed over; the real ones are listed as before', () => {
    seed();
    const good = fileAudit(wiki, { targetId: 'C001', severity: 'high' }, at(0));
    const dirOf = wikiLayout(wiki).audit;
    writeFileSync(join(dirOf, 'bare.md'), '## Anchor\nNo frontmatter.\n');
    writeFileSync(join(dirOf, 'untargeted.md'), '---\nseverity: low\n---\n\n## Anchor\nNo target.\n');
    writeFileSync(join(dirOf, 'numbered.md'), '---\ntarget_id: 7\n---\n');
    mkdirSync(join(dirOf, 'folder.md'));
    const listed = listAudits(wiki);
    expect(listed.open.map((a) => a.file)).toEqual([good.file]);
    expect(listed.unreadable.map((u) => [u.file, u.reason])).toEqual([
      ['bare.md', 'it has no frontmatter, so no target_id (the id of the wiki entry it audits)'],
      ['folder.md', 'it cannot be read (EISDIR)'],
      ['numbered.md', 'its target_id must be a string, the id of the wiki entry it audits (found 7)'],
      ['untargeted.md', 'its frontmatter has no target_id (the id of the wiki entry it audits)'],
    ]);
    expect(listed.unreadable[0]!.path).toBe(join(dirOf, 'bare.md'));
    expect(buildMaintenanceReport(wiki, dir.path, at(1)).unreadableAudits.map((u) => u.file)).toEqual(['bare.md', 'folder.md', 'numbered.md', 'untargeted.md']);
  });
});

describe('wiki migrate', () => {
  it('moves knowledge-base entries, trashes engineering folders, merges per-session caches, never overwrites', () => {
    const kb = join(dir.path, 'knowledge-base');
    mkdirSync(join(kb, 'contexts/debug'), { recursive: true });
    mkdirSync(join(kb, 'errors'), { recursive: true });
    writeFileSync(join(kb, 'contexts/debug/C001-a.md'), '---\nid: "C001"\nrequest: "a"\n---\n');
    writeFileSync(join(kb, 'contexts/debug/C002-b.md'), '---\nid: "C002"\nrequest: "old b"\n---\n');
    writeFileSync(join(kb, 'errors/E001-x.md'), 'old error');
    writeEntry(wiki, 'contexts/debug/C002-b.md', { id: '"C002"', request: '"new b"' }, '');
    mkdirSync(join(wiki, 'sessions'), { recursive: true });
    writeFileSync(join(wiki, 'sessions/s9-summaries.json'), JSON.stringify({ exp_1: { text: 'old summary', source: 'ai', status: 'ready', savedAt: 1 } }));
    writeFileSync(join(wiki, 'sessions/s9-intent-buckets.json'), JSON.stringify({ openIntentKey: 'debug', buckets: { debug: { intentKey: 'debug', nodeTitle: 'Fix', explorationIds: ['exp_1'] } } }));

    const plan = migrateWikiLayout(wiki, { workspaceRoot: dir.path, dryRun: true, now: T0 });
    expect(plan.items.map((i) => i.action).sort()).toEqual(['conflict', 'merge', 'merge', 'move', 'trash']);
    expect(existsSync(join(kb, 'contexts/debug/C001-a.md'))).toBe(true);

    migrateWikiLayout(wiki, { workspaceRoot: dir.path, now: T0 });
    expect(readFileSync(join(wiki, 'knowledge/contexts/debug/C001-a.md'), 'utf8')).toContain('request: "a"');
    expect(readFileSync(join(wiki, 'knowledge/contexts/debug/C002-b.md'), 'utf8')).toContain('new b');
    expect(existsSync(join(kb, 'contexts/debug/C002-b.md'))).toBe(true);
    expect(existsSync(join(kb, 'errors'))).toBe(false);
    const bundle = loadBundle(wikiLayout(wiki), 's9', { workspaceRoot: dir.path }).bundle!;
    expect(bundle.explorations.exp_1!.summary!.text).toBe('old summary');
    expect(bundle.curation).toMatchObject({ openIntentKey: 'debug', buckets: { debug: { explorationIds: ['exp_1'] } } });
    expect(readdirSync(join(wiki, 'sessions/.migrated')).sort()).toEqual(['s9-intent-buckets.json', 's9-summaries.json']);
  });
});
