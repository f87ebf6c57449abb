/** Sessions and runs: older versions read as 3.0, check warns, seal reports the backlog, batch resolve and triage. */
import { cpSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { project } from '../../../../test/helpers/knowledge2.js';
import { runSource } from '../reconcile/receipt.js';
import { resolveAll, review } from '../reconcile/review.js';
import { checkRun, completeRun, finishRun, sealRun, sealSession, stage } from './ops.js';
import { createRun, createSession, listRunIds, listSessions, readRun, readSession, sessionDir } from './store.js';
import { createLifecycleContext } from '../context.js';

// What the lifecycle operations keep between calls (the KnowledgeService's, in the daemon); no embedder here.
const lc = createLifecycleContext({ embedder: null });

describe('session and run lifecycle', () => {
  it('reads session/1.x, session/2.0 and command-run/1.x files as the current versions', () => {
    const p = project();
    const write = (sid: string, doc: object) => {
      mkdirSync(join(sessionDir(p.root, sid), 'runs'), { recursive: true });
      writeFileSync(join(sessionDir(p.root, sid), 'session.json'), JSON.stringify(doc));
    };
    write('old-1', { schema_version: 'session/1.2', session_id: 'old-1', status: 'sealed', lifecycle: { sealed_at: '2026-01-01T00:00:00Z' }, created_at: '2026-01-01T00:00:00Z' });
    write('old-2', { schema_version: 'session/2.0', session_id: 'old-2', intent: 'migrate', activity_revision: 4, created_at: '2026-01-02T00:00:00Z' });
    write('old-3', { schema_version: 'session/3.0', session_id: 'old-3', status: 'paused', created_at: '2026-01-03T00:00:00Z' });
    expect(readSession(p.root, 'old-1')).toMatchObject({ schema_version: 'session/3.0', status: 'completed', completed_at: '2026-01-01T00:00:00Z' });
    expect(readSession(p.root, 'old-2')).toMatchObject({ status: 'open', objective: 'migrate', activity_revision: 4 });
    expect(readSession(p.root, 'old-3').status).toBe('open');
    expect(listSessions(p.root).map((s) => s.session_id)).toEqual(['old-1', 'old-2', 'old-3']);
    mkdirSync(join(sessionDir(p.root, 'old-2'), 'runs', '20260102-001-execute'), { recursive: true });
    writeFileSync(join(sessionDir(p.root, 'old-2'), 'runs', '20260102-001-execute', 'run.json'), JSON.stringify({ schema_version: 'command-run/1.3', run_id: '20260102-001-execute', session_id: 'old-2', status: 'created', command_contract_hash: 'sha256:00' }));
    expect(listRunIds(p.root, 'old-2')).toEqual(['20260102-001-execute']);
    const r = readRun(p.root, 'old-2', '20260102-001-execute');
    expect(r).toMatchObject({ schema_version: 'run/3.0', status: 'pending', sealed_at: null });
    expect(r).toHaveProperty('command_contract_hash', 'sha256:00'); // not consumed by the upgrade: kept
    // A sealed legacy session takes no new runs.
    expect(() => createRun(p.root, 'old-1', { runId: 'run-x' })).toThrow(/completed; runs can only be created in an open session/);
  });

  it('a session folder a link sends out of the project takes no ledger or session write; a run folder linked by design still does', () => {
    const p = project();
    createSession(p.root, 'evil');
    const outside = project().dir; // another folder, with a copy of the open session
    cpSync(sessionDir(p.root, 'evil'), join(outside, 'evil'), { recursive: true });
    rmSync(sessionDir(p.root, 'evil'), { recursive: true });
    symlinkSync(join(outside, 'evil'), sessionDir(p.root, 'evil'));
    const before = readdirSync(join(outside, 'evil')).sort();
    const staged = () => stage(p.root, { target: 'spec', title: 'x', content: 'Queues are drained before shutdown.', session: 'evil' }, process.env);
    // Refused when the session is read, before any write.
    const refusal = `Refusing to read ${join(sessionDir(p.root, 'evil'), 'session.json')}: ${sessionDir(p.root, 'evil')} is a symbolic link leading to ${join(outside, 'evil', 'session.json')}, outside the project's`;
    expect(staged).toThrow(refusal);
    expect(() => createRun(p.root, 'evil', { runId: 'run-1' })).toThrow(refusal);
    expect(readdirSync(join(outside, 'evil')).sort()).toEqual(before);
    // The whole sessions folder linked out: the same.
    rmSync(sessionDir(p.root, 'evil'));
    rmSync(join(p.dir, '.workflow', 'sessions'), { recursive: true });
    symlinkSync(outside, join(p.dir, '.workflow', 'sessions'));
    expect(staged).toThrow(/is a symbolic link leading to .*outside the project's .*Nothing was read or written/);
    expect(readdirSync(join(outside, 'evil')).sort()).toEqual(before);
    rmSync(join(p.dir, '.workflow', 'sessions'));
    // A run folder linked to the daemon's run directory is how runs work: staged into as before.
    createSession(p.root, 's-1');
    const daemonRun = join(p.root.home, 'runs', 'task-1', 'run-1');
    createRun(p.root, 's-1', { runId: 'run-1', linkTo: daemonRun });
    stage(p.root, { target: 'spec', title: 'y', content: 'Queues are drained before shutdown.', run: 'run-1', session: 's-1' }, process.env);
    expect(readdirSync(daemonRun)).toContain('knowledge-delta.json');
  });

  it('complete is idempotent, check warns, seal suppresses exact duplicates, session seal reports the backlog', () => {
    const p = project();
    createSession(p.root, 's-1');
    createRun(p.root, 's-1', { runId: 'run-1' });
    const dup = stage(p.root, { target: 'spec', title: 'x', content: 'Every error thrown to a user must carry a stable error code and say what and where.', run: 'run-1', session: 's-1' }, process.env).candidate.candidate_id;
    stage(p.root, { target: 'spec', title: 'y', content: 'Queues are drained before shutdown.', run: 'run-1', session: 's-1' }, process.env);
    const check = checkRun(lc, p.root, 's-1', 'run-1');
    expect(check.warnings.join('\n')).toMatch(/no knowledge inputs recorded/);
    expect(check.warnings.join('\n')).toMatch(/report\.md has no summary/);
    writeFileSync(join(runSource(p.root, 's-1', 'run-1').dir, 'report.md'), '---\nverdict: blocked\nsummary: stuck\nconstraints:\n  - text: "Queues are drained before shutdown."\n    status: locked\n---\n');
    const first = completeRun(lc, p.root, 's-1', 'run-1');
    expect(first.run).toMatchObject({ status: 'completed', verdict: 'blocked', summary: 'stuck' });
    const ledger = () => JSON.parse(readFileSync(runSource(p.root, 's-1', 'run-1').ledgerPath, 'utf8'));
    const rev = ledger().revision;
    completeRun(lc, p.root, 's-1', 'run-1');
    expect(ledger().revision).toBe(rev); // nothing restaged
    expect(ledger().candidates).toHaveLength(2); // the locked constraint has the same content as a staged candidate
    const sealed = sealRun(lc, p.root, 's-1', 'run-1');
    expect(sealed.suppressed).toBe(1);
    expect(ledger().candidates.find((c: { candidate_id: string }) => c.candidate_id === dup).status).toBe('rejected');
    const s = sealSession(lc, p.root, 's-1');
    expect(s).toMatchObject({ backlog: 1, unsealed_runs: [], session: { status: 'completed' } });
  });

  it('finishRun (the end of an orchestrator run) leaves what complete then seal leave, in one pass', () => {
    const outcome = (finish: (root: ReturnType<typeof project>['root']) => void) => {
      const p = project();
      createSession(p.root, 's-1');
      createRun(p.root, 's-1', { runId: 'run-1' });
      stage(p.root, { target: 'spec', title: 'x', content: 'Every error thrown to a user must carry a stable error code and say what and where.', run: 'run-1', session: 's-1' }, process.env);
      writeFileSync(join(runSource(p.root, 's-1', 'run-1').dir, 'report.md'), '---\nverdict: ready\nsummary: done it\ndecisions:\n  - text: "Errors carry a stable code."\n    status: accepted\nconstraints:\n  - text: "Every error thrown to a user must carry a stable error code and say what and where."\n    status: locked\n---\n');
      const before = readRun(p.root, 's-1', 'run-1').revision;
      finish(p.root);
      const src = runSource(p.root, 's-1', 'run-1');
      const run = readRun(p.root, 's-1', 'run-1');
      const receipt = JSON.parse(readFileSync(src.receiptPath, 'utf8'));
      return {
        run: { status: run.status, verdict: run.verdict, summary: run.summary, ended: typeof run.ended_at, sealed: typeof run.sealed_at },
        writes: run.revision - before,
        candidates: JSON.parse(readFileSync(src.ledgerPath, 'utf8')).candidates.map((c: { title: string; status: string; source_kind: string }) => [c.source_kind, c.status, c.title]),
        receipt: { counts: receipt.counts, candidates: receipt.candidates.map((c: { candidate_id: string; disposition: string }) => [c.candidate_id, c.disposition]) },
        active: readSession(p.root, 's-1').active_run_ids,
      };
    };
    let result: ReturnType<typeof finishRun> | undefined;
    const once = outcome((root) => (result = finishRun(lc, root, 's-1', 'run-1')));
    const twice = outcome((root) => {
      completeRun(lc, root, 's-1', 'run-1');
      sealRun(lc, root, 's-1', 'run-1');
    });
    expect(once.run).toEqual({ status: 'sealed', verdict: 'done', summary: 'done it', ended: 'string', sealed: 'string' });
    // The staged spec repeats a project spec word for word (suppressed); the constraint repeats the staged spec (one candidate).
    expect(once.candidates).toEqual([['manual', 'rejected', 'x'], ['decision', 'pending', 'Errors carry a stable code.']]);
    expect(once.active).toEqual([]);
    expect({ ...once, writes: 0 }).toEqual({ ...twice, writes: 0 });
    expect([once.writes, twice.writes]).toEqual([1, 2]); // run.json written once instead of twice
    expect(result).toMatchObject({ run: { status: 'sealed' }, suppressed: 1, reconciliation: { candidates: 2, suppressed: 1 } });
    expect(result!.candidate_ids).toEqual(once.receipt.candidates.map(([id]: string[]) => id));
  });

  it('seal names a run whose ledger is unreadable instead of counting it as an empty backlog', () => {
    const p = project();
    createSession(p.root, 's-1');
    createRun(p.root, 's-1', { runId: 'run-1' });
    stage(p.root, { target: 'spec', title: 'a', content: 'Queues are drained before shutdown.', run: 'run-1', session: 's-1' }, process.env);
    sealRun(lc, p.root, 's-1', 'run-1');
    const ledgerFile = runSource(p.root, 's-1', 'run-1').ledgerPath;
    writeFileSync(ledgerFile, '{"schema_version": ');
    const s = sealSession(lc, p.root, 's-1');
    expect(s).toMatchObject({ backlog: 0, unreadable: [{ run_id: 'run-1', error: expect.stringContaining(`${ledgerFile}: not valid JSON`) }] });
  });

  it('batch resolution by disposition and the triage order (corroboration, then age)', () => {
    const p = project();
    createSession(p.root, 's-1');
    for (const rid of ['run-1', 'run-2']) createRun(p.root, 's-1', { runId: rid });
    const shared = 'Every public endpoint is rate limited per token.';
    stage(p.root, { target: 'spec', title: 'a', content: 'Old-style rule nobody else has.', run: 'run-1', session: 's-1' }, process.env);
    stage(p.root, { target: 'spec', title: 'b', content: shared, run: 'run-1', session: 's-1' }, process.env);
    stage(p.root, { target: 'spec', title: 'b', content: shared, run: 'run-2', session: 's-1' }, process.env);
    stage(p.root, { target: 'spec', title: 'Retry budget', content: 'Network calls should retry at most three times with exponential backoff and jitter, logged.', run: 'run-2', session: 's-1' }, process.env);
    const r = review(lc, p.root, 's-1', { refresh: true });
    expect(r.triage[0]).toMatchObject({ corroboration: 2 });
    const rel = r.candidates.filter((c) => c.disposition !== 'unique');
    expect(rel.length).toBeGreaterThan(0);
    const disp = rel[0]!.disposition!;
    const res = resolveAll(lc, p.root, 's-1', disp, 'related', 'same area, different rule');
    expect(res.length).toBe(rel.filter((c) => c.disposition === disp).length);
    expect(review(lc, p.root, 's-1').candidates.filter((c) => c.resolution?.status === 'confirmed').map((c) => c.disposition)).toEqual(res.map(() => 'related'));
  });
});
