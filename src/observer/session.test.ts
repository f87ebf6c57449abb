import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { tempDir, TranscriptBuilder, writeEntry, type TempDir } from './__fixtures__/transcript-builder.js';
import type { SummaryItem } from './bundle/types.js';
import { loadBundle } from './bundle/store.js';
import type { CuratorInput } from './curation/curator.js';
import { acceptProposal, listProposals } from './curation/proposals.js';
import { ObserverEventEmitter, type ObserverUpdate } from './events.js';
import { ObserverSession, type ObserverSessionOptions } from './session.js';
import { listWikiEntries } from '../knowledge/format/wiki/entries.js';
import { fileAudit } from './upkeep/audit.js';
import { wikiLayout } from '../knowledge/format/wiki/layout.js';

let dir: TempDir;
let wiki: string;
let jsonl: string;
let now: number;
const SID = 'sess-1';

beforeEach(() => {
  dir = tempDir();
  wiki = join(dir.path, 'wiki');
  jsonl = join(dir.path, 'claude', `${SID}.jsonl`);
  now = Date.parse('2026-11-20T10:00:00.000Z');
});
afterEach(() => dir.cleanup());

function open(extra: Partial<ObserverSessionOptions> = {}): ObserverSession {
  return new ObserverSession({ sessionId: SID, jsonlPath: jsonl, wikiRoot: wiki, workspaceRoot: dir.path, projectSlug: 'app', now: () => now, ...extra });
}

function seedLoginEntry(): string {
  return writeEntry(
    wiki,
    'contexts/debug/C001-login-token-expiry.md',
    { id: '"C001"', slug: '"login-token-expiry"', request: '"Fix login token expiring too early"', version: '1', tags: ['proj:app', 'auth'], status: '"draft"' },
    '# Login token expiry\n\n## 摘要\n\nexpiresIn was hard-coded to 60.\n\n## 解决方案\n\nRaise expiresIn.\n\n## 参考\n\n- src/auth/session.ts\n',
  );
}

/** Two intents: a debug fix with tools, then a pivot to implementing something else. */
function debugThenImplement(b = new TranscriptBuilder(now)): TranscriptBuilder {
  b.user('Fix the login token expiring too early in auth')
    .turn({
      tools: [
        { name: 'Read', input: { file_path: 'src/auth/session.ts' } },
        { name: 'Edit', input: { file_path: 'src/auth/session.ts', old_string: '60', new_string: '3600' } },
        { name: 'Bash', input: { command: 'npm test' }, result: '12 passed' },
      ],
      answer: 'expiresIn is now 3600 seconds; tests pass.',
    })
    .user('Add a refresh token endpoint to the API')
    .turn({ tools: [{ name: 'Write', input: { file_path: 'src/auth/refresh.ts', content: 'x' } }], answer: 'Added POST /auth/refresh.' });
  return b;
}

describe('prior retrieval and intent curation without a model', () => {
  it('shows KNOWLEDGE from the wiki; on a pivot it files a proposal for the prior entry instead of editing it, and accepting applies it', async () => {
    const path = seedLoginEntry();
    const before = readFileSync(path, 'utf8');
    const b = debugThenImplement();
    b.writeTo(jsonl);
    now = b.clock + 1_000;
    const s = open();
    const step = await s.step();
    // The pivot turn (exp_2) opens the implement bucket; the closed debug intent's anchor is its own last turn.
    expect(step.curated).toEqual([{ intentKey: 'debug', explorationId: 'exp_1', status: 'skipped', reason: 'proposed_no_agent', targetId: 'C001' }]);
    expect(readFileSync(path, 'utf8')).toBe(before);

    const bundle = loadBundle(wikiLayout(wiki), SID, { workspaceRoot: dir.path }).bundle!;
    expect(bundle.explorations.exp_1!.retrieval).toMatchObject({ origin: 'retrieved', entryId: 'C001', relativePath: 'contexts/debug/C001-login-token-expiry.md' });
    expect(bundle.explorations.exp_1!.write).toMatchObject({ origin: 'saved', status: 'skipped', reason: 'proposed_no_agent', targetId: 'C001', turnCount: 1 });
    expect(bundle.explorations.exp_2!.write).toBeUndefined();
    expect(bundle.curation.buckets.debug).toMatchObject({ explorationIds: ['exp_1'], anchorExplorationId: 'exp_1', persistResult: { status: 'skipped', id: `${SID}:exp_1` } });
    expect(bundle.curation.buckets.implement).toMatchObject({ explorationIds: ['exp_2'] });
    expect(bundle.curation.openIntentKey).toBe('implement');
    expect(bundle.session.intent).toMatchObject({ intentKey: 'implement', parentIntentKey: 'debug', phase: 'active' });
    expect(bundle.session.intent!.history.map((h) => h.titleDelta)).toEqual(['pivot', 'pivot']);
    expect(bundle.curation.evidence.exp_1).toMatchObject({ schema_version: 1, request: 'Fix the login token expiring too early in auth', result: 'success', commands: ['npm test'] });
    expect(bundle.session.flow.flowGraph!.nodes.map((n) => [n.explorationId, n.metaBadges.wiki])).toEqual([
      ['exp_1', 'skipped'],
      ['exp_2', 'none'],
    ]);
    const log = readFileSync(join(wiki, 'knowledge/log/2026-11-20.md'), 'utf8');
    expect(log).toMatch(/^# Knowledge log 2026-11-20/);
    expect(log).toMatch(/## \[\d\d:\d\d\] skip · target: C001 · reason: proposed_no_agent/);

    const { open: proposals } = listProposals(wiki);
    expect(proposals).toHaveLength(1);
    expect(proposals[0]).toMatchObject({ id: bundle.explorations.exp_1!.write!.proposalId, kind: 'update', reason: 'no_agent', targetId: 'C001', source: { sessionId: SID, explorationId: 'exp_1' } });
    expect(proposals[0]!.newFacts.join('\n')).toContain('expiresIn is now 3600 seconds');

    // The person accepts: now the entry is updated, inside 解决方案 (before 参考).
    acceptProposal(wiki, proposals[0]!.id, { projectSlug: 'app', now: new Date(now) });
    const entry = readFileSync(path, 'utf8');
    expect(entry).toMatch(/^version: 2$/m);
    expect(entry).toMatch(/### 更新 2026-11-20 \(exp_1\)/);
    expect(entry).toContain('exploration_id: "exp_1"');
    expect(entry).toContain('intent_key: "debug"');
    expect(entry.indexOf('Raise expiresIn.')).toBeLessThan(entry.indexOf('### 更新'));
    expect(entry.indexOf('### 更新')).toBeLessThan(entry.indexOf('## 参考'));
    expect(listProposals(wiki)).toMatchObject({ open: [], closed: [{ status: 'accepted', targetId: 'C001' }] });

    const index = JSON.parse(readFileSync(join(wiki, 'sessions/_index.json'), 'utf8'));
    expect(index).toMatchObject({ schemaVersion: 1, workspaceRoot: dir.path, lastSessionId: SID });
    expect(index.sessions[SID].bundleUpdatedAt).toBe(now);

    // A second pass changes nothing and curates nothing again.
    const again = await s.step();
    expect(again).toEqual({ changed: false, newSummaries: 0, curated: [] });
  });

  it('never overwrites an entry whose frontmatter it cannot read cleanly: the write fails and the file is untouched', async () => {
    const path = seedLoginEntry();
    const broken = readFileSync(path, 'utf8').replace('version: 1', 'version 1 (hand edited)');
    writeFileSync(path, broken);
    debugThenImplement().writeTo(jsonl);
    now += 3_600_000;
    // Only an agent's decision rewrites an entry; this one decides to update the prior.
    const step = await open({ curate: async (input) => ({ action: 'update', targetId: input.prior!.entryId }) }).step();
    expect(step.curated[0]).toMatchObject({ intentKey: 'debug', status: 'failed' });
    expect(step.curated[0]!.reason).toMatch(/target_unreadable: .*C001-login-token-expiry\.md \(line \d+: unreadable frontmatter line/);
    expect(readFileSync(path, 'utf8')).toBe(broken);
  });

  it('without a prior, intent mode skips (skill_only_no_prior) and creates nothing', async () => {
    debugThenImplement().writeTo(jsonl);
    now += 3_600_000;
    const s = open();
    const step = await s.step();
    expect(step.curated[0]).toMatchObject({ intentKey: 'debug', status: 'skipped', reason: 'skill_only_no_prior' });
    expect(listWikiEntries(wiki).entries).toEqual([]);
  });

  it('does not curate when leaving a greeting, and skips ineligible intents', async () => {
    const b = new TranscriptBuilder(now);
    b.user('hello').turn({ answer: 'Hi!' }).user('where is the config loaded?').turn({ tools: [{ name: 'Grep', input: { pattern: 'loadConfig' } }], answer: 'src/config.ts' });
    b.user('Fix the crash when the config file is missing').turn({ tools: [{ name: 'Edit', input: { file_path: 'src/config.ts' } }], answer: 'Guarded.' });
    b.writeTo(jsonl);
    now = b.clock + 1_000;
    const step = await open().step();
    // greeting → explore: a pivot from a greeting closes nothing; explore → debug closes explore, which is not eligible.
    expect(step.curated).toEqual([{ intentKey: 'explore', explorationId: 'exp_2', status: 'skipped', reason: 'intent_not_wiki_eligible' }]);
  });
});

describe('the idle sweep', () => {
  it('curates the open intent 30 s after the last completion, once', async () => {
    seedLoginEntry();
    const b = new TranscriptBuilder(now);
    b.user('Fix the login token expiring too early in auth').turn({ tools: [{ name: 'Edit', input: { file_path: 'src/auth/session.ts' } }], answer: 'Fixed.' });
    b.writeTo(jsonl);
    now = b.clock + 29_000;
    const s = open();
    expect((await s.step()).curated).toEqual([]);
    now = b.clock + 30_000;
    const swept = await s.step();
    expect(swept.curated).toEqual([{ intentKey: 'debug', explorationId: 'exp_1', status: 'skipped', reason: 'proposed_no_agent', targetId: 'C001' }]);
    now += 60_000;
    expect((await s.step()).curated).toEqual([]);
  });

  it('leaves an entry with an open audit alone, even when an agent decides to update it: a proposal waits instead', async () => {
    const path = seedLoginEntry();
    const before = readFileSync(path, 'utf8');
    fileAudit(wiki, { targetId: 'C001', anchor: 'expiresIn is not the cause' }, new Date(now));
    const b = new TranscriptBuilder(now);
    b.user('Fix the login token expiring too early in auth').turn({ tools: [{ name: 'Edit', input: { file_path: 'src/auth/session.ts' } }], answer: 'Moved the refresh to the client clock.' });
    b.writeTo(jsonl);
    now = b.clock + 30_000;
    const swept = await open({ curate: async () => ({ action: 'update', targetId: 'C001' }) }).step();
    expect(swept.curated).toEqual([{ intentKey: 'debug', explorationId: 'exp_1', status: 'skipped', reason: 'proposed_open_audit', targetId: 'C001' }]);
    expect(readFileSync(path, 'utf8')).toBe(before);
    expect(listProposals(wiki).open.map((p) => [p.targetId, p.reason])).toEqual([['C001', 'open_audit']]);
  });

  it('waits while an exploration is still running', async () => {
    const b = new TranscriptBuilder(now);
    b.user('Fix the parser').turn({ tools: [{ name: 'Edit', input: { file_path: 'p.ts' } }], answer: 'ok' }).user('Fix the lexer too').turn({ tools: [{ name: 'Edit', input: { file_path: 'l.ts' } }], end: false });
    b.writeTo(jsonl);
    now = b.clock + 120_000;
    expect((await open().step()).curated).toEqual([]);
  });
});

describe('with a curator agent and a summary model', () => {
  it('creates an entry in the §8.4 format, then dedups a similar request from another session', async () => {
    const calls: CuratorInput[] = [];
    const curate = async (input: CuratorInput) => {
      calls.push(input);
      return { action: 'create' as const, reason: 'agent_new_knowledge' };
    };
    debugThenImplement().writeTo(jsonl);
    now += 3_600_000;
    const first = await open({ curate }).step();
    // Both intents are curated: the pivot turn opened the implement bucket, which the idle sweep then curates.
    expect(first.curated.map((c) => [c.intentKey, c.explorationId, c.status, c.targetId])).toEqual([
      ['debug', 'exp_1', 'saved', 'C001'],
      ['implement', 'exp_2', 'saved', 'C002'],
    ]);
    expect(calls[0]!.mode).toBe('intent');
    expect(calls[0]!.digest.turns.map((t) => t.explorationId)).toEqual(['exp_1']);
    const files = readdirSync(join(wiki, 'knowledge/contexts/debug'));
    expect(readdirSync(join(wiki, 'knowledge/contexts/implement'))).toEqual([expect.stringMatching(/^C002-/)]);
    expect(files).toHaveLength(1);
    expect(files[0]).toMatch(/^C001-[a-z0-9-]+\.md$/);
    const text = readFileSync(join(wiki, 'knowledge/contexts/debug', files[0]!), 'utf8');
    const keys = [...text.split('---')[1]!.matchAll(/^([a-z_]+):/gm)].map((m) => m[1]);
    expect(keys).toEqual(['id', 'slug', 'request', 'created', 'updated', 'version', 'type', 'category', 'facet', 'tags', 'related', 'aliases', 'source', 'sources', 'extraction_confidence', 'status', 'intent_key']);
    // The summaries' persist type `context` becomes facet hypothesis (FORMATS §8.4).
    expect(text).toContain('facet: "hypothesis"');
    expect(text).toContain('  - "proj:app"');
    expect(text).toMatch(/## 问题[\s\S]*## 摘要[\s\S]*## 上下文[\s\S]*## 解决方案/);

    // Another session asks the same thing: the prior is shown, and a create is deduplicated.
    const other = join(dir.path, 'claude', 'sess-2.jsonl');
    debugThenImplement(new TranscriptBuilder(now)).writeTo(other);
    now += 3_600_000;
    const s2 = new ObserverSession({ sessionId: 'sess-2', jsonlPath: other, wikiRoot: wiki, workspaceRoot: dir.path, projectSlug: 'app', now: () => now, curate });
    const second = await s2.step();
    expect(calls[2]!.prior?.entryId).toBe('C001');
    expect(second.curated[0]).toMatchObject({ status: 'skipped', reason: 'similar_request_exists', targetId: 'C001' });
    expect(listWikiEntries(wiki).entries.map((e) => e.id)).toEqual(['C001', 'C002']);
  });

  it('a failing curator skips with skill_failed and never falls back to creating', async () => {
    debugThenImplement().writeTo(jsonl);
    now += 3_600_000;
    const step = await open({ curate: async () => Promise.reject(new Error('model down')) }).step();
    expect(step.curated[0]).toMatchObject({ status: 'skipped', reason: 'skill_failed: model down' });
    expect(listWikiEntries(wiki).entries).toEqual([]);
  });

  it('uses model summaries (one SummaryItem shape), falls back on failure, and hydrates instead of re-summarising', async () => {
    debugThenImplement().writeTo(jsonl);
    now += 3_600_000;
    let calls = 0;
    const summarize = async (d: { explorationId: string; question: string }): Promise<SummaryItem> => {
      calls += 1;
      if (d.explorationId === 'exp_2') throw new Error('rate limited');
      return {
        explorationId: d.explorationId,
        text: `AI: ${d.question}`,
        source: 'ai',
        status: 'ready',
        savedAt: 0,
        flowchart: { nodeId: d.explorationId, nodeTitle: 'Login expiry', parentId: null, branchType: 'trunk', importance: 'high', dropFromChart: false, intentKey: 'bugfix', titleDelta: 'weird' as never },
        persistMeta: { should_persist: true, solution_detail: 'raise expiresIn' },
      };
    };
    const s = open({ summarize });
    await s.step();
    const view = s.view();
    expect(view.explorations[0]!.summary).toMatchObject({ source: 'ai', text: 'AI: Fix the login token expiring too early in auth', flowchart: { intentKey: 'debug', titleDelta: 'continue' } });
    expect(view.explorations[1]!.summary).toMatchObject({ source: 'fallback', status: 'ready', reason: 'model_failed: rate limited' });
    expect(calls).toBe(2);
    const reopened = open({ summarize });
    await reopened.step();
    expect(calls).toBe(2);
  });
});

describe('legacy per-turn mode', () => {
  it('curates every finished turn and may create from the summary when nothing similar exists', async () => {
    const b = new TranscriptBuilder(now);
    b.user('hi').turn({ answer: 'hello!' });
    b.user('Configure the nginx reverse proxy for the websocket server').turn({ tools: [{ name: 'Edit', input: { file_path: 'deploy/nginx.conf' } }], answer: 'Added Upgrade headers to the nginx location block.' });
    b.writeTo(jsonl);
    now = b.clock + 1_000;
    const step = await open({ legacyPerTurn: true }).step();
    expect(step.curated.map((c) => [c.explorationId, c.status, c.reason])).toEqual([
      ['exp_1', 'skipped', 'low_value'],
      ['exp_2', 'saved', 'rules_extract'],
    ]);
    const entries = listWikiEntries(wiki).entries;
    expect(entries.map((e) => [e.id, e.intentKey, e.source.explorationId])).toEqual([['C001', 'devops', 'exp_2']]);
  });
});

describe('bundle load statuses', () => {
  async function firstRun(): Promise<void> {
    new TranscriptBuilder(now).user('where is the config loaded?').turn({ answer: 'src/config.ts' }).writeTo(jsonl);
    await open().step();
  }

  it('hit after a write; stale after the transcript grows', async () => {
    await firstRun();
    expect(open().loadResult.status).toBe('hit');
    const later = new Date(Date.now() + 5_000);
    new TranscriptBuilder(now + 60_000).user('and the defaults?').appendTo(jsonl);
    const { utimesSync } = await import('node:fs');
    utimesSync(jsonl, later, later);
    const s = open();
    expect(s.loadResult).toMatchObject({ status: 'stale', reason: 'jsonl_newer' });
    await s.step();
    expect(s.view().explorations.map((e) => e.question)).toEqual(['where is the config loaded?', 'and the defaults?']);
    expect(open().loadResult.status).toBe('hit');
  });

  it('a corrupted bundle is kept aside, reported, and the session is rebuilt and still shown', async () => {
    await firstRun();
    const path = join(wiki, 'sessions', SID, 'bundle.json');
    writeFileSync(path, '{"schemaVersion":1,"meta":{"sessionId":"sess-1",');
    const s = open();
    expect(s.loadResult).toMatchObject({ status: 'corrupted', reason: 'parse_error' });
    expect(s.loadResult.detail).toContain('bundle.json');
    expect(readdirSync(join(wiki, 'sessions', SID)).some((f) => f.startsWith('bundle.json.corrupt-'))).toBe(true);
    await s.step();
    expect(s.view().explorations).toHaveLength(1);
    expect(open().loadResult.status).toBe('hit');
  });

  it('schema/session mismatch and workspace mismatch are corrupted; a vanished workspace is expired; a vanished transcript is a miss', async () => {
    await firstRun();
    const path = join(wiki, 'sessions', SID, 'bundle.json');
    const good = readFileSync(path, 'utf8');
    writeFileSync(path, good.replace('"schemaVersion": 1', '"schemaVersion": 2'));
    expect(loadBundle(wikiLayout(wiki), SID, { workspaceRoot: dir.path })).toMatchObject({ status: 'corrupted', reason: 'schema_or_session_mismatch' });
    writeFileSync(path, good);
    expect(loadBundle(wikiLayout(wiki), SID, { workspaceRoot: '/elsewhere' })).toMatchObject({ status: 'corrupted', reason: 'workspace_mismatch' });
    writeFileSync(path, good.replace(JSON.stringify(dir.path), JSON.stringify(join(dir.path, 'gone'))));
    expect(loadBundle(wikiLayout(wiki), SID, { workspaceRoot: dir.path })).toMatchObject({ status: 'expired', reason: 'workspace_root_missing' });
    writeFileSync(path, good);
    rmSync(jsonl);
    expect(loadBundle(wikiLayout(wiki), SID, { workspaceRoot: dir.path })).toMatchObject({ status: 'miss', reason: 'jsonl_source_missing' });
    expect(loadBundle(wikiLayout(wiki), 'nope', { workspaceRoot: dir.path })).toMatchObject({ status: 'miss', reason: 'bundle_not_found' });
  });

  it('restore mode reads only the bundle: no transcript, no live search', async () => {
    seedLoginEntry();
    new TranscriptBuilder(now).user('Fix the login token expiring too early').turn({ answer: 'ok' }).writeTo(jsonl);
    await open().step();
    new TranscriptBuilder(now + 60_000).user('Fix the login token expiring too early, again').appendTo(jsonl);
    rmSync(join(wiki, 'knowledge'), { recursive: true });
    const r = open({ mode: 'restore' });
    const view = r.view();
    expect(view.mode).toBe('restore');
    expect(view.explorations.map((e) => e.id)).toEqual(['exp_1']);
    expect(view.explorations[0]!.knowledge?.entryId).toBe('C001');
    expect(await r.step()).toEqual({ changed: false, newSummaries: 0, curated: [] });
  });
});

describe('retrieval follows the disk, and updates are announced', () => {
  it('a deleted wiki file no longer hits the next question', async () => {
    const entry = seedLoginEntry();
    const b = new TranscriptBuilder(now);
    b.user('Fix the login token expiring too early').turn({ answer: 'ok' });
    b.writeTo(jsonl);
    const events = new ObserverEventEmitter();
    const seen: ObserverUpdate[] = [];
    events.on('update', (u) => seen.push(u));
    const s = open({ events });
    await s.step();
    expect(s.view().explorations[0]!.knowledge?.entryId).toBe('C001');
    rmSync(entry);
    b.user('Fix the login token expiring too early please').appendTo(jsonl);
    await s.step();
    const view = s.view();
    expect(view.explorations[1]!.knowledge).toBeNull();
    // The first card keeps what it showed when it ran (the bundle records the hit at that time).
    expect(view.explorations[0]!.knowledge?.entryId).toBe('C001');
    expect(seen.map((u) => [u.sessionId, u.explorationCount, u.runningExplorationId])).toEqual([
      [SID, 1, null],
      [SID, 2, 'exp_2'],
    ]);
    expect(existsSync(join(wiki, 'sessions', SID, 'bundle.json'))).toBe(true);
  });
});

describe('a slow model and a replaced transcript', () => {
  it('shows and stores new questions while a summary is still being written', async () => {
    const b = new TranscriptBuilder(now);
    b.user('where is the config loaded?').turn({ answer: 'src/config.ts' }).writeTo(jsonl);
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const summarize = async (d: { explorationId: string }): Promise<SummaryItem> => {
      await gate;
      return { explorationId: d.explorationId, text: 'model summary', source: 'ai', status: 'ready', savedAt: 0 };
    };
    const s = open({ summarize });
    const pending = s.step();
    b.user('and the defaults?').appendTo(jsonl);
    expect(s.pollNow()).toBe(true);
    expect(s.view().explorations.map((e) => [e.id, e.summary?.text ?? null])).toEqual([
      ['exp_1', null],
      ['exp_2', null],
    ]);
    // The bundle was written before the model ran.
    expect(loadBundle(wikiLayout(wiki), SID, { workspaceRoot: dir.path }).bundle!.explorations.exp_1!.retrieval).toBeNull();
    release();
    await pending;
    expect(s.view().explorations[0]!.summary?.text).toBe('model summary');
  });

  it('drops what a replaced transcript no longer holds', async () => {
    new TranscriptBuilder(now).user('first').turn({ answer: 'a' }).user('second').turn({ answer: 'b' }).writeTo(jsonl);
    const s = open();
    await s.step();
    const tmp = `${jsonl}.new`;
    new TranscriptBuilder(now).user('a different first question').turn({ answer: 'c' }).writeTo(tmp);
    const { renameSync } = await import('node:fs');
    renameSync(tmp, jsonl);
    await s.step();
    const bundle = loadBundle(wikiLayout(wiki), SID, { workspaceRoot: dir.path }).bundle!;
    expect(Object.keys(bundle.explorations)).toEqual(['exp_1']);
    expect(bundle.explorations.exp_1).toMatchObject({ question: 'a different first question', summary: { text: expect.stringContaining('a different first question') } });
  });
});

describe('observeOnce in restore mode', () => {
  it('opens a session by id from its bundle alone, even when the transcript is gone', async () => {
    new TranscriptBuilder(now).user('where is the config loaded?').turn({ answer: 'src/config.ts' }).writeTo(jsonl);
    await open().step();
    rmSync(jsonl);
    const { observeOnce } = await import('./observe.js');
    const config = { env: {}, cwd: dir.path, wikiRoot: wiki, workspaceRoot: dir.path, projectSlug: 'app', legacyPerTurn: false, eligibleIntents: new Set<string>(), agent: null };
    const { view, step } = await observeOnce(config, { session: SID, restore: true });
    expect(view).toMatchObject({ mode: 'restore', load: { status: 'miss', reason: 'jsonl_source_missing' } });
    expect(view.explorations.map((e) => [e.id, e.question])).toEqual([['exp_1', 'where is the config loaded?']]);
    expect(step.changed).toBe(false);
  });
});
