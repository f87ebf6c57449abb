/**
 * Summaries and curation through the agent provider, with the scripted agent
 * (the only fake): configured the way a user does it (MAESTRO_OBSERVER_AGENT),
 * run through `observeOnce` (what `maestro observe --once` calls).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readCallLog } from '../../agents/scripted.js';
import { tempDir, TranscriptBuilder, writeEntry, type TempDir } from '../__fixtures__/transcript-builder.js';
import { loadBundle } from '../bundle/store.js';
import { resolveObserverConfig } from '../config.js';
import { observeOnce } from '../observe.js';
import { listWikiEntries } from '../../knowledge/format/wiki/entries.js';
import { wikiLayout } from '../../knowledge/format/wiki/layout.js';
import { resolveObserverAgent } from './config.js';

let dir: TempDir;
let wiki: string;
let jsonl: string;
let script: string;
let callLog: string;
const SID = 'sess-a';

beforeEach(() => {
  dir = tempDir('maestro-observer-agent-');
  wiki = join(dir.path, 'wiki');
  jsonl = join(dir.path, 'claude', `${SID}.jsonl`);
  script = join(dir.path, 'agent.json');
  callLog = join(dir.path, 'calls.ndjson');
});
afterEach(() => dir.cleanup());

type Step = { match: Record<string, string>; times?: number; failTimes?: number; failMessage?: string; actions: Array<Record<string, unknown>> };
const json = (v: unknown) => ({ answer: `Here it is:\n\`\`\`json\n${JSON.stringify(v, null, 2)}\n\`\`\`` });

function summaryAnswer(intent: string, title: string, extra: Record<string, unknown> = {}) {
  return json({
    summary: `AI summary: ${title}.`,
    persist_meta: { should_persist: true, type: 'error', slug: 'Login Token Expiry', title, solution_detail: `How ${title} was done`, tags: ['auth'], intent_key: intent, confidence: 0.8 },
    flowchart: { node_title: title, intent_key: intent, title_delta: 'pivot', importance: 'high' },
    ...extra,
  });
}

const goodSummaries: Step[] = [
  { match: { role: 'summarize', title: ':exp_1' }, actions: [summaryAnswer('bugfix', 'Login token expiry')] },
  { match: { role: 'summarize', title: ':exp_2' }, actions: [summaryAnswer('feature', 'Refresh endpoint')] },
];

function writeScript(steps: Step[]): void {
  writeFileSync(script, JSON.stringify({ steps }));
}

/** A debug fix, then a pivot to new work: the pivot closes the debug intent and curates it. */
function transcript(): void {
  new TranscriptBuilder(Date.parse('2026-11-20T10:00:00.000Z'))
    .user('Fix the login token expiring too early in auth')
    .turn({
      tools: [
        { name: 'Edit', input: { file_path: 'src/auth/session.ts', old_string: '60', new_string: '3600' } },
        { name: 'Bash', input: { command: 'npm test' }, result: '12 passed' },
      ],
      answer: 'expiresIn is now 3600 seconds; tests pass.',
    })
    .user('Add a refresh token endpoint to the API')
    .turn({ tools: [{ name: 'Write', input: { file_path: 'src/auth/refresh.ts', content: 'x' } }], answer: 'Added POST /auth/refresh.' })
    .writeTo(jsonl);
}

function config(extraEnv: Record<string, string> = {}) {
  return resolveObserverConfig(
    { FLOW_WIKI_DIR: wiki, FLOW_PROJECT_DIR: dir.path, MAESTRO_OBSERVER_AGENT: `scripted:${script}`, MAESTRO_OBSERVER_AGENT_LOG: callLog, MAESTRO_OBSERVER_MODEL: 'test-model', ...extraEnv },
    dir.path,
  );
}

const once = (cfg = config()) => observeOnce(cfg, { session: jsonl });
const calls = (role: string) => readCallLog(callLog).filter((c) => c.role === role);

describe('summaries through the agent provider', () => {
  it('generates the missing summaries with the agent, caches them in the bundle, and hydrates them on the next start', async () => {
    writeScript([...goodSummaries, { match: { role: 'curate' }, actions: [json({ action: 'skip', reason: 'nothing new' })] }]);
    transcript();
    const { view } = await once();
    const s1 = view.explorations[0]!.summary!;
    expect(s1).toMatchObject({ source: 'ai', status: 'ready', text: 'AI summary: Login token expiry.' });
    // The hint is normalised (bugfix → debug) and the persist meta kept as structured data (slug made a slug).
    expect(s1.flowchart).toMatchObject({ nodeTitle: 'Login token expiry', intentKey: 'debug', titleDelta: 'pivot', importance: 'high' });
    expect(s1.persistMeta).toEqual({ should_persist: true, type: 'error', slug: 'login-token-expiry', title: 'Login token expiry', solution_detail: 'How Login token expiry was done', tags: ['auth'], intent_key: 'debug', confidence: 0.8 });
    expect(calls('summarize').map((c) => [c.title, c.model, c.permissionMode])).toEqual([
      [`summary ${SID}:exp_1`, 'test-model', 'plan'],
      [`summary ${SID}:exp_2`, 'test-model', 'plan'],
    ]);
    // One shape end to end: the bundle holds the same item, and the evidence the curator reads carries its persist meta.
    const bundle = loadBundle(wikiLayout(wiki), SID, { workspaceRoot: dir.path }).bundle!;
    expect(bundle.explorations.exp_1!.summary).toEqual(s1);
    expect(bundle.curation.evidence.exp_1).toMatchObject({ summary: s1.text, persist_meta: s1.persistMeta });

    const again = await once();
    expect(again.view.explorations.map((e) => e.summary?.text)).toEqual(['AI summary: Login token expiry.', 'AI summary: Refresh endpoint.']);
    expect(calls('summarize')).toHaveLength(2);
  });

  it('falls back to the deterministic summary, with the reason kept, on a malformed, an invalid or a failed answer', async () => {
    writeScript([
      { match: { role: 'summarize', title: ':exp_1' }, actions: [{ answer: 'Sure! The user fixed a token bug.' }] },
      { match: { role: 'summarize', title: ':exp_2' }, actions: [json({ summary: 'ok', persist_meta: { should_persist: 'yes' } })] },
      { match: { role: 'curate' }, actions: [json({ action: 'skip', reason: 'nothing new' })] },
    ]);
    transcript();
    const { view } = await once();
    expect(view.explorations[0]!.summary).toMatchObject({ source: 'fallback', status: 'ready', reason: `model_invalid: summary of exp_1: the answer holds no JSON object` });
    expect(view.explorations[1]!.summary!.source).toBe('fallback');
    expect(view.explorations[1]!.summary!.reason).toMatch(/^model_invalid: summary of exp_2: persist_meta\.should_persist: .*; flowchart: /);
    // The deterministic summary still says what happened, and curation still ran on its hints.
    expect(view.explorations[0]!.summary!.text).toContain('Fix the login token expiring too early in auth');

    writeScript([{ match: { role: 'summarize' }, failTimes: 99, failMessage: 'overloaded', actions: [] }]);
    transcript();
    const jsonl2 = join(dir.path, 'claude', 'sess-b.jsonl');
    writeFileSync(jsonl2, readFileSync(jsonl));
    const failed = await observeOnce(config(), { session: jsonl2 });
    expect(failed.view.explorations[0]!.summary).toMatchObject({ source: 'fallback', status: 'ready' });
    expect(failed.view.explorations[0]!.summary!.reason).toMatch(/^model_failed: overloaded/);
  });

  it('redacts the titles an agent writes before cutting them, so no part of a key is kept, on the board or on disk', async () => {
    // The node title is cut at 80 characters and the note at 40; cut first, `ghp_16C7e42F…` no longer
    // looked like a token and was kept as it was (the note was not redacted at all).
    const token = 'ghp_16C7e42F292c6912E7710c838347Ae178B4a';
    const title = `${'Deploy with docker and check the logs, '.repeat(2).slice(0, 70)} ${token}`;
    writeScript([
      { match: { role: 'summarize', title: ':exp_1' }, actions: [summaryAnswer('devops', 'x', { flowchart: { node_title: title, intent_key: 'devops', title_delta: 'pivot', title_delta_note: `key ${token}` } })] },
      { match: { role: 'summarize', title: ':exp_2' }, actions: [summaryAnswer('feature', 'Refresh endpoint')] },
      { match: { role: 'curate' }, actions: [json({ action: 'skip', reason: 'nothing new' })] },
    ]);
    transcript();
    const { view } = await once();
    expect(view.explorations[0]!.summary!.flowchart).toMatchObject({ nodeTitle: `${title.slice(0, 70)} …`, titleDeltaNote: 'key [redacted: github-token]' });
    const onDisk = readFileSync(join(wiki, 'sessions', SID, 'bundle.json'), 'utf8');
    expect(onDisk).toContain('key [redacted: github-token]');
    expect(onDisk).not.toContain(token.slice(0, 8));
  });
});

describe('curation through the agent provider', () => {
  it('creates the entry the agent wrote, in the §8.4 format, on the closed intent', async () => {
    writeScript([
      ...goodSummaries,
      {
        // Matched on the prompt too: the curator is shown the turn's persist meta (else no step answers and the test fails).
        match: { role: 'curate', title: ':debug', prompt: '/How Login token expiry was done/' },
        actions: [
          json({
            action: 'create',
            reason: 'reusable fix',
            entry: { type: 'context', slug: 'login-token-expiry', request: 'Fix login token expiring too early', title: 'Login token expiry', summary: 'expiresIn was 60 s.', solution: 'Set expiresIn to 3600 in src/auth/session.ts.', tags: ['auth'], facet: 'failure', confidence: 0.9 },
          }),
        ],
      },
      // The pivot turn opened the implement intent; the idle sweep curates it too.
      { match: { role: 'curate', title: ':implement' }, actions: [json({ action: 'skip', reason: 'nothing reusable' })] },
    ]);
    transcript();
    const { view, step } = await once();
    expect(step.curated).toEqual([
      { intentKey: 'debug', explorationId: 'exp_1', status: 'saved', reason: 'reusable fix', targetId: 'C001' },
      { intentKey: 'implement', explorationId: 'exp_2', status: 'skipped', reason: 'nothing reusable' },
    ]);
    const text = readFileSync(join(wiki, 'knowledge/contexts/debug/C001-login-token-expiry.md'), 'utf8');
    expect(text).toContain('request: "Fix login token expiring too early"');
    expect(text).toContain('facet: "failure"');
    expect(text).toContain('Set expiresIn to 3600 in src/auth/session.ts.');
    expect(text).toContain('  - "proj:');
    // The badge is on the anchor turn only.
    expect(view.explorations.map((e) => e.wiki?.status ?? null)).toEqual(['saved', 'skipped']);
    expect(calls('curate')).toHaveLength(2);
  });

  it('an answer that is not a valid decision, or that updates an id it was not shown, skips and writes nothing', async () => {
    const entry = writeEntry(
      wiki,
      'contexts/debug/C001-login-token-expiry.md',
      { id: '"C001"', slug: '"login-token-expiry"', request: '"Fix login token expiring too early"', version: '1', tags: ['scope:global', 'auth'], status: '"draft"' },
      '# Login token expiry\n\n## 摘要\n\nexpiresIn was 60.\n\n## 解决方案\n\nRaise expiresIn.\n',
    );
    const before = readFileSync(entry, 'utf8');
    writeScript([...goodSummaries, { match: { role: 'curate' }, actions: [json({ action: 'update', reason: 'fix it', target_id: 'C999' })] }]);
    transcript();
    const first = await once();
    expect(first.step.curated[0]).toMatchObject({ status: 'skipped', reason: 'skill_invalid: update target C999 is neither the prior nor a candidate' });
    expect(readFileSync(entry, 'utf8')).toBe(before);

    writeScript([...goodSummaries, { match: { role: 'curate' }, actions: [json({ action: 'create', reason: 'x', entry: { slug: 'Not A Slug!', request: 'r', summary: 's', solution: 'y' } })] }]);
    const other = join(dir.path, 'claude', 'sess-c.jsonl');
    writeFileSync(other, readFileSync(jsonl));
    const second = await observeOnce(config(), { session: other });
    expect(second.step.curated[0]!.status).toBe('skipped');
    expect(second.step.curated[0]!.reason).toMatch(/^skill_invalid: curator decision for debug: entry\.slug: slug must be kebab-case/);
    expect(listWikiEntries(wiki).entries.map((e) => e.id)).toEqual(['C001']);
    expect(readFileSync(entry, 'utf8')).toBe(before);
  });

  it('updates the prior when the agent says so, and skips with the agent reason', async () => {
    writeEntry(
      wiki,
      'contexts/debug/C001-login-token-expiry.md',
      { id: '"C001"', slug: '"login-token-expiry"', request: '"Fix login token expiring too early"', version: '1', tags: ['scope:global', 'auth'], status: '"draft"' },
      '# Login token expiry\n\n## 摘要\n\nexpiresIn was 60.\n\n## 解决方案\n\nRaise expiresIn.\n',
    );
    writeScript([...goodSummaries, { match: { role: 'curate' }, times: 1, actions: [json({ action: 'update', reason: 'adds the test command' })] }, { match: { role: 'curate' }, actions: [json({ action: 'skip', reason: 'already filed' })] }]);
    transcript();
    const { step } = await once();
    expect(step.curated[0]).toMatchObject({ status: 'updated', reason: 'adds the test command', targetId: 'C001' });
    expect(readFileSync(join(wiki, 'knowledge/contexts/debug/C001-login-token-expiry.md'), 'utf8')).toMatch(/^version: 2$/m);
    const other = join(dir.path, 'claude', 'sess-d.jsonl');
    writeFileSync(other, readFileSync(jsonl));
    const second = await observeOnce(config(), { session: other });
    expect(second.step.curated[0]).toMatchObject({ status: 'skipped', reason: 'already filed' });
  });

  it('an agent that fails skips with skill_failed; with the agent off, intent mode never creates without a prior', async () => {
    writeScript([...goodSummaries, { match: { role: 'curate' }, failTimes: 99, failMessage: 'model down', actions: [] }]);
    transcript();
    expect((await once()).step.curated[0]).toMatchObject({ status: 'skipped', reason: expect.stringMatching(/^skill_failed: model down/) });
    const other = join(dir.path, 'claude', 'sess-e.jsonl');
    writeFileSync(other, readFileSync(jsonl));
    const off = await observeOnce(config({ MAESTRO_OBSERVER_AGENT: 'off' }), { session: other });
    expect(off.step.curated[0]).toMatchObject({ status: 'skipped', reason: 'skill_only_no_prior' });
    expect(off.view.explorations[0]!.summary!.source).toBe('fallback');
    expect(listWikiEntries(wiki).entries).toEqual([]);
  });
});

describe('turning the agent on', () => {
  it('reads MAESTRO_OBSERVER_AGENT and refuses a bad value naming the variable', () => {
    writeScript(goodSummaries);
    expect(resolveObserverAgent({}, dir.path)).toBeNull();
    expect(resolveObserverAgent({ MAESTRO_OBSERVER_AGENT: 'off' }, dir.path)).toBeNull();
    expect(resolveObserverAgent({ MAESTRO_OBSERVER_AGENT: 'claude', MAESTRO_MODEL_EASY: 'small' }, dir.path)).toEqual({ provider: { kind: 'claude' }, model: 'small', timeoutMs: 120_000 });
    expect(resolveObserverAgent({ MAESTRO_OBSERVER_AGENT: 'scripted:agent.json' }, dir.path)!.provider).toEqual({ kind: 'scripted', script });
    expect(resolveObserverAgent({}, dir.path, { agent: 'scripted', agentScript: script })!.provider).toEqual({ kind: 'scripted', script });
    expect(() => resolveObserverAgent({ MAESTRO_OBSERVER_AGENT: 'gpt' }, dir.path)).toThrow(/MAESTRO_OBSERVER_AGENT must be off, claude, scripted:<script file> or a provider JSON object, got "gpt"/);
    expect(() => resolveObserverAgent({ MAESTRO_OBSERVER_AGENT: 'scripted:missing.json' }, dir.path)).toThrow(/MAESTRO_OBSERVER_AGENT: the agent script .*missing\.json does not exist/);
    expect(() => resolveObserverAgent({ MAESTRO_OBSERVER_AGENT: '{"kind":"command"}' }, dir.path)).toThrow(/MAESTRO_OBSERVER_AGENT: command: /);
    // Not JSON: the place only. JSON.parse's message would quote the value, keys in its env and all.
    const unquoted = '{"kind":"command","command":["run"],"env":{"API_KEY":TOPSECRET-1234}}';
    let refused: Error | undefined;
    try {
      resolveObserverAgent({ MAESTRO_OBSERVER_AGENT: unquoted }, dir.path);
    } catch (err) {
      refused = err as Error;
    }
    expect([(refused as Error & { code?: string }).code, refused?.message]).toEqual(['CONFIG_INVALID', 'MAESTRO_OBSERVER_AGENT is not valid JSON (line 1, column 54).']);
    expect(`${refused?.message} ${String(refused?.cause)}`).not.toContain('TOPSECRET');
    const cut = '{"kind":"command","command":["run"]';
    expect(() => resolveObserverAgent({}, dir.path, { agent: cut })).toThrow(expect.objectContaining({ message: `--agent is not valid JSON (it ends early, at line 1, column ${cut.length + 1}).` }));
    expect(() => resolveObserverAgent({ MAESTRO_OBSERVER_AGENT: 'claude', MAESTRO_OBSERVER_AGENT_TIMEOUT_MS: 'soon' }, dir.path)).toThrow(/MAESTRO_OBSERVER_AGENT_TIMEOUT_MS must be a positive integer/);
    expect(() => resolveObserverAgent({}, dir.path, { agent: 'scripted' })).toThrow(/--agent scripted needs --agent-script/);
  });
});
