import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { render } from 'ink-testing-library';
import { createElement as h } from 'react';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { tempDir, TranscriptBuilder, writeEntry, type TempDir } from '../__fixtures__/transcript-builder.js';
import { ObserverSession } from '../session.js';
import { wikiLayout } from '../../knowledge/format/wiki/layout.js';
import { ObserverApp } from './app.js';
import { SessionUiSource } from './source.js';

let dir: TempDir;
beforeEach(() => {
  dir = tempDir();
});
afterEach(() => dir.cleanup());

/** Waits for Ink's next frames until the predicate holds (Ink renders asynchronously). */
async function frameWhere(lastFrame: () => string | undefined, pred: (f: string) => boolean): Promise<string> {
  for (let i = 0; i < 200; i += 1) {
    const f = lastFrame() ?? '';
    if (pred(f)) return f;
    await new Promise((r) => setImmediate(r));
  }
  throw new Error(`frame never matched; last frame:\n${lastFrame()}`);
}

describe('the terminal UI, driven through Ink', () => {
  it('shows the status bar, cards with KNOWLEDGE and SUMMARY, the wiki badge on the anchor; navigates; k files an audit; q quits', async () => {
    const wiki = join(dir.path, 'wiki');
    const jsonl = join(dir.path, 's.jsonl');
    writeEntry(wiki, 'contexts/debug/C001-login.md', { id: '"C001"', request: '"Fix login token expiring too early"', tags: ['proj:app'] }, '## 摘要\n\nexpiresIn was 60.\n');
    const b = new TranscriptBuilder();
    b.user('Fix the login token expiring too early in auth').turn({ tools: [{ name: 'Edit', input: { file_path: 'src/auth.ts' } }], answer: 'Raised expiresIn.' });
    b.user('Add a refresh token endpoint to the API').turn({ tools: [{ name: 'Write', input: { file_path: 'src/refresh.ts' } }], answer: 'Added.' });
    b.user('Now write the docs page for refresh tokens');
    b.writeTo(jsonl);
    let now = b.clock + 1_000;
    const session = new ObserverSession({ sessionId: 's', jsonlPath: jsonl, wikiRoot: wiki, workspaceRoot: dir.path, projectSlug: 'app', now: () => now });
    await session.step();
    const source = new SessionUiSource(session, wiki, () => now);
    const ui = render(h(ObserverApp, { source, width: 100 }));

    let frame = await frameWhere(ui.lastFrame, (f) => f.includes('exp_3'));
    expect(frame).toContain('session s · 3 explorations (1 running)');
    expect(frame).toContain('Intent: Add a refresh token endpoint to the API (implement)');
    expect(frame).toContain('Running · 0 tools');
    expect(frame).toContain('3/3');

    ui.stdin.write('\u001b[A'); // up
    ui.stdin.write('\u001b[A');
    frame = await frameWhere(ui.lastFrame, (f) => f.includes('1/3'));
    expect(frame).toContain('▸ exp_1 · Fix the login token expiring too early in auth');
    expect(frame).toMatch(/KNOWLEDGE C001 · Fix login token expiring too early \(\d\.\d\d\)/);
    expect(frame).toContain('SUMMARY Fix the login token expiring too early in auth');
    // Without an agent the closed intent's curation is a proposal, on its own last turn.
    expect(frame).toContain('Done · 1 tool (Edit×1) · wiki proposal for C001');
    expect(frame).toContain('PROPOSAL for C001:');

    ui.stdin.write('n');
    frame = await frameWhere(ui.lastFrame, (f) => f.includes('2/3'));
    expect(frame).toContain('Done · 1 tool (Write×1)');
    expect(frame).not.toContain('1 tools');

    // k on a card without KNOWLEDGE says so; on exp_1 it files an audit.
    ui.stdin.write('k');
    frame = await frameWhere(ui.lastFrame, (f) => f.includes('No KNOWLEDGE card on exp_2'));
    ui.stdin.write('g');
    await frameWhere(ui.lastFrame, (f) => f.includes('1/3'));
    ui.stdin.write('k');
    frame = await frameWhere(ui.lastFrame, (f) => f.includes('Audit filed against C001'));
    const audits = readdirSync(wikiLayout(wiki).audit);
    expect(audits).toHaveLength(1);
    const audit = readFileSync(join(wikiLayout(wiki).audit, audits[0]!), 'utf8');
    expect(audit).toContain('target_id: "C001"');
    expect(audit).toContain('exploration_id: "exp_1"');
    expect(audit).toContain('## Context request\nFix the login token expiring too early in auth');

    // a accepts the proposal: the entry is updated now, by the person's decision.
    ui.stdin.write('a');
    frame = await frameWhere(ui.lastFrame, (f) => f.includes('Proposal accepted: C001 updated'));
    expect(readFileSync(join(wiki, 'knowledge/contexts/debug/C001-login.md'), 'utf8')).toMatch(/### 更新 \d{4}-\d\d-\d\d \(exp_1\)/);
    ui.stdin.write('d');
    frame = await frameWhere(ui.lastFrame, (f) => f.includes('No open proposal on exp_1'));

    // New activity re-renders through the subscription; G follows the newest again.
    b.turn({ answer: 'Docs written.' }).appendTo(jsonl);
    now += 1_000;
    await session.step();
    source.notify();
    ui.stdin.write('G');
    frame = await frameWhere(ui.lastFrame, (f) => f.includes('3/3') && f.includes('Done · 0 tools'));
    expect(frame).toContain('bundle hit');
    expect(frame).toContain('▸ exp_3');

    ui.stdin.write('q');
    await frameWhere(ui.lastFrame, () => true);
    ui.unmount();
  });

  it('shows what a transcript holds without letting the terminal run it: a window-title sequence in a question is shown as \\u{1b}', async () => {
    const wiki = join(dir.path, 'wiki');
    const jsonl = join(dir.path, 's.jsonl');
    const b = new TranscriptBuilder();
    b.user('why does \u001b]0;owned\u0007the build fail').turn({ tools: [{ name: 'Bash', input: { command: 'npm run build' } }], answer: 'a type error' });
    b.writeTo(jsonl);
    const now = b.clock + 1_000;
    const session = new ObserverSession({ sessionId: 's', jsonlPath: jsonl, wikiRoot: wiki, workspaceRoot: dir.path, projectSlug: 'app', now: () => now });
    await session.step();
    const ui = render(h(ObserverApp, { source: new SessionUiSource(session, wiki, () => now), width: 100 }));
    const frame = await frameWhere(ui.lastFrame, (f) => f.includes('exp_1'));
    expect(frame).toContain('exp_1 · why does \\u{1b}]0;owned\\u{7}the build fail');
    expect(frame).toContain('Intent: why does \\u{1b}]0;owned\\u{7}the build fail');
    // Ink's own colours are escape sequences; the question's are not among them.
    expect(frame).not.toContain('\u001b]');
    expect(frame).not.toContain('\u0007');
    ui.unmount();
  });
});
