/**
 * recordSummary rewrites the bundle's session intent and markCurated a bucket's persistResult and its
 * anchor's write (FORMATS §8.3, §8.7): keys this code does not know, on the intent and on its history
 * items, on persistResult and on write, are written back as they were read, as the bundle store keeps them.
 */
import { describe, expect, it } from 'vitest';
import { normalizeBundle } from '../bundle/store.js';
import { createEmptyBundle, type FlowchartHint } from '../bundle/types.js';
import { markCurated, recordSummary } from './buckets.js';

const hint = (intentKey: string, nodeTitle: string): FlowchartHint => ({ nodeId: nodeTitle, nodeTitle, parentId: null, branchType: 'trunk', importance: 'medium', dropFromChart: false, intentKey });

/** A bundle as another writer left it on disk: its session intent carries keys Maestro does not know. */
function bundleWithForeignIntent() {
  const bundle = createEmptyBundle({ sessionId: 's', workspaceRoot: '/w', jsonlPath: '/w/s.jsonl', jsonlMtime: 1 }, 1);
  recordSummary(bundle, 'exp_1', hint('debug', 'Fix login'), 10);
  const file = JSON.parse(JSON.stringify(bundle));
  file.session.intent.x_intent = { by: 'another writer', nested: [1, 2] };
  file.session.intent.confidence = 0.7;
  file.session.intent.history[0].x_item = 'kept';
  return normalizeBundle(file, 's')!;
}

describe('recordSummary keeps the keys of session.intent it does not know', () => {
  it.each([
    ['continues the intent', hint('debug', 'Fix login'), 'continue'],
    ['pivots to another', hint('implement', 'Add cache'), 'pivot'],
  ])('when the next summary %s', (_name, next, delta) => {
    const bundle = bundleWithForeignIntent();
    expect(recordSummary(bundle, 'exp_2', next, 20).delta).toBe(delta);
    const intent = JSON.parse(JSON.stringify(bundle)).session.intent;
    expect(intent).toMatchObject({ x_intent: { by: 'another writer', nested: [1, 2] }, confidence: 0.7, revision: 2, intentKey: next.intentKey, nodeTitle: next.nodeTitle, updatedAt: 20 });
    expect(intent.history.map((h: { explorationId: string; x_item?: string }) => [h.explorationId, h.x_item])).toEqual([
      ['exp_1', 'kept'],
      ['exp_2', undefined],
    ]);
  });
});

describe('markCurated keeps the keys of persistResult and write it does not know', () => {
  it('and drops the known keys the new outcome does not carry', () => {
    const bundle = createEmptyBundle({ sessionId: 's', workspaceRoot: '/w', jsonlPath: '/w/s.jsonl', jsonlMtime: 1 }, 1);
    recordSummary(bundle, 'exp_1', hint('debug', 'Fix login'), 10);
    bundle.explorations.exp_1 = { explorationId: 'exp_1', question: 'Why does login fail?' };
    const file = JSON.parse(JSON.stringify(bundle));
    // As another writer left them: an earlier outcome on the anchor turn (a per-turn curation), with keys Maestro does not know.
    file.curation.buckets.debug.persistResult = { status: 'failed', reason: 'timeout', id: 's:exp_0', path: 'old.md', x_result: { by: 'another writer' } };
    file.explorations.exp_1.write = { origin: 'saved', status: 'skipped', reason: 'low_value', targetId: 'C009', proposalId: 'P1', completedAt: 5, x_write: [1, 2] };
    const read = normalizeBundle(file, 's')!;
    markCurated(read, 'debug', 'exp_1', { origin: 'saved', status: 'saved', targetId: 'C001', targetPath: 'contexts/debug/C001-login.md', turnCount: 1, completedAt: 20 }, 20);
    const written = JSON.parse(JSON.stringify(read));
    expect(written.curation.buckets.debug).toMatchObject({ curatedAt: 20, anchorExplorationId: 'exp_1' });
    expect(written.curation.buckets.debug.persistResult).toEqual({ status: 'saved', id: 's:exp_1', path: 'contexts/debug/C001-login.md', x_result: { by: 'another writer' } });
    expect(written.explorations.exp_1.write).toEqual({ origin: 'saved', status: 'saved', targetId: 'C001', targetPath: 'contexts/debug/C001-login.md', turnCount: 1, completedAt: 20, x_write: [1, 2] });
  });
});
