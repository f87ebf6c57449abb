/**
 * Golden values of FORMATS §7.3, computed from the published maestro-fabric-gui
 * files (test/fixtures/knowledge2/fabric-gui): candidate ids, the corpus
 * fingerprint, the candidate snapshot hash in both layouts, and the published
 * receipt itself reading as fresh against our state.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FABRIC, FABRIC_RID, FABRIC_SID, project } from '../../../../test/helpers/knowledge2.js';
import { freshness, readReceipt, readSourceState, reconcileSource, runSource } from '../reconcile/receipt.js';
import { parseReport, reportDrafts } from '../session/report.js';
import { readLedger } from './ledger.js';
import { EMPTY_SHA, MATCHER_REVISION, candidateId, candidateSnapshotHash, fingerprintOf } from './recipes.js';
import { createLifecycleContext } from '../context.js';

// What the lifecycle operations keep between calls (the KnowledgeService's, in the daemon); no embedder.
const lc = createLifecycleContext({ embedder: null });

const RUN = join(FABRIC, '.workflow', 'sessions', FABRIC_SID, 'runs', FABRIC_RID);
const published = JSON.parse(readFileSync(join(RUN, 'knowledge-reconciliation.json'), 'utf8'));

describe('FORMATS §7.3 golden values', () => {
  // The published receipt is lexical ("semantic-delta/1.0"): `lc` has no embedder, whatever the environment says.

  it('candidate ids follow the recipe (title is not part of the id)', () => {
    expect(candidateId('spec', 'Expose Fabric bind fencing generations as numeric inputs (default 1) instead of hardcoding')).toBe('KDC-0acd2a63ab4f9f01');
    // normA: case and whitespace do not change the id; the target does.
    expect(candidateId('spec', '  EXPOSE Fabric bind fencing generations as numeric\ninputs (default 1) instead of hardcoding ')).toBe('KDC-0acd2a63ab4f9f01');
    expect(candidateId('knowhow', 'Expose Fabric bind fencing generations as numeric inputs (default 1) instead of hardcoding')).not.toBe('KDC-0acd2a63ab4f9f01');
    const ledger = readLedger(join(RUN, 'knowledge-delta.json'))!;
    const drafts = reportDrafts(parseReport(readFileSync(join(RUN, 'report.md'), 'utf8')), FABRIC_RID);
    const ids = [...ledger.candidates.map((c) => c.candidate_id), ...drafts.map((d) => d.candidate_id)].sort();
    expect(ids).toEqual(published.candidates.map((c: { candidate_id: string }) => c.candidate_id).sort());
  });

  it('corpus fingerprint of the single knowhow recipe, and of an empty corpus', () => {
    lc.corpus.clear();
    const c = lc.corpus.read(join(FABRIC, '.workflow'));
    expect(c.docs.map((d) => d.id)).toEqual(['knowhow-rcp-20260920-github-actions-tauri']);
    expect(c.fingerprint).toBe('271b1216e6f5611184f63a45c2edb789125736d8cacea58739bd1219a35efd0e');
    expect(fingerprintOf([])).toBe(EMPTY_SHA);
    expect(lc.corpus.read(project({ specs: false }).root.workflowDir).fingerprint).toBe(EMPTY_SHA);
  });

  it('candidate snapshot hash: delta @bedd855 + 3 report drafts, newer and v0.5.79 layouts', () => {
    const state = readSourceState({ sid: FABRIC_SID, rid: FABRIC_RID, dir: RUN, ledgerPath: join(RUN, 'knowledge-delta.json'), receiptPath: join(RUN, 'knowledge-reconciliation.json') });
    expect(state.candidates).toHaveLength(5);
    expect(state.snapshotHash).toBe('b1bdf31a743249eb52996184c060df4096b55ada6084e1b32c0acf70a2b946ab');
    expect(candidateSnapshotHash(state.candidates, 'v0.5.79').slice(0, 8)).toBe('ccd28d30');
  });

  it('the published receipt is fresh against this state, and reconciling reproduces it', () => {
    const { root } = project({ fixture: 'fabric' });
    const src = runSource(root, FABRIC_SID, FABRIC_RID);
    const state = readSourceState(src);
    const corpus = lc.corpus.read(root.workflowDir);
    expect(freshness(lc, src, readReceipt(src), state, corpus)).toEqual({ state: 'fresh', reasons: [] });
    const mine = reconcileSource(lc, root, src);
    expect(mine.matcher_revision).toBe(MATCHER_REVISION);
    const strip = (r: typeof published) => ({ ...r, generated_at: null });
    expect(strip(mine)).toEqual(strip(published));
  });
});
