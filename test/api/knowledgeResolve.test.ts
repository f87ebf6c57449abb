/**
 * Resolving a candidate through the API: a request refused for its input writes nothing (its `refresh` runs
 * only once the candidate and target are known good), and the refusal names the body's fields, not the CLI's flags.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { removeTempDirs } from '../helpers/db.js';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { makeRepo } from '../helpers/repo.js';
import { SPEC_FILE } from '../helpers/knowledge2.js';
import { resolveWorkflowRoot } from '../../src/knowledge/format/root.js';
import { stage } from '../../src/knowledge/lifecycle/session/ops.js';
import { createSession } from '../../src/knowledge/lifecycle/session/store.js';

describe('POST /api/knowledge/review/:sessionId/resolve', () => {
  let d: TestDaemon;
  let session: string;
  let candidate: string;
  let resolve: (body: object) => Promise<{ status: number; body: { error?: { code: string; message: string }; resolution?: unknown } }>;
  beforeEach(async () => {
    d = await startTestDaemon({}, { noOrchestrator: true });
    const repo = makeRepo({ 'README.md': '# test\n', '.workflow/specs/coding-conventions.md': SPEC_FILE });
    const projectId = (await d.store.projects.create({ name: 'p', repoPath: repo, config: { provider: { kind: 'scripted', script: '/nonexistent.yaml' } } })).id;
    const root = resolveWorkflowRoot({ workflowRoot: repo, env: process.env });
    createSession(root, 'task-1', 'teach the board');
    candidate = stage(root, { target: 'spec', title: 'Queues drain before shutdown', content: 'Every queue is drained before the process shuts down.', category: 'coding', session: 'task-1', evidence: ['src/queue.ts:12'] }, process.env).candidate.candidate_id;
    session = join(repo, '.workflow', 'sessions', 'task-1');
    resolve = async (payload) => {
      const res = await d.app.inject({ method: 'POST', url: `/api/knowledge/review/task-1/resolve?projectId=${projectId}`, payload });
      return { status: res.statusCode, body: res.json() };
    };
  });
  afterEach(async () => {
    await d.stop();
    removeTempDirs();
  });

  it('an unknown target is refused, naming the body field, and the refresh it asked for does not run', async () => {
    const before = readdirSync(session).sort();
    const ledger = readFileSync(join(session, 'knowledge-delta.json'), 'utf8');
    const r = await resolve({ candidate, as: 'related', target: 'spec:project:nope', reason: 'x', refresh: true });
    expect(r.status).toBe(404);
    expect(r.body.error).toEqual({ code: 'UNKNOWN_KNOWLEDGE_ID', message: expect.stringMatching(/^target spec:project:nope is not active project knowledge in /) });
    expect(existsSync(join(session, 'knowledge-reconciliation.json'))).toBe(false);
    expect(readdirSync(session).sort()).toEqual(before);
    expect(readFileSync(join(session, 'knowledge-delta.json'), 'utf8')).toBe(ledger);
  });

  it('an unknown candidate is refused and writes nothing either; a good request refreshes, then resolves', async () => {
    const before = readdirSync(session).sort();
    const r = await resolve({ candidate: 'KDC-0123456789abcdef', as: 'unique', reason: 'x', refresh: true });
    expect(r).toMatchObject({ status: 400, body: { error: { code: 'BAD_INPUT', message: expect.stringMatching(/^Candidate KDC-0123456789abcdef is not in session task-1/) } } });
    expect(readdirSync(session).sort()).toEqual(before);

    const ok = await resolve({ candidate, as: 'related', target: 'S-20260102-bbbb', reason: 'drain, then retry', refresh: true });
    expect(ok).toMatchObject({ status: 200, body: { resolution: { candidate_id: candidate, disposition: 'related', canonical_id: 'S-20260102-bbbb' } } });
    const receipt = JSON.parse(readFileSync(join(session, 'knowledge-reconciliation.json'), 'utf8'));
    expect(receipt.candidates[0]).toMatchObject({ candidate_id: candidate, resolution: { status: 'confirmed', reason: 'drain, then retry' } });
  });
});
