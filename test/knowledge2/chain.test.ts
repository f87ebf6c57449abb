/**
 * The whole chain as a user runs it, process by process (seed 000 §11):
 * stage + signal → review/resolve → complete → seal → promote → session seal
 * → search readback; plus workflow-root isolation and unknown ids refused.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { maestro, maestroOk, project } from '../helpers/knowledge2.js';

const REPORT = `---
verdict: done
summary: "added the cache"
decisions:
  - accepted: "Invalidate the settings cache on every write to the settings table."
  - text: "Maybe use Redis later"
    status: proposed
constraints:
  - locked: "Never log API tokens, not even at debug level."
---
## Summary
`;

describe('maestro knowledge: the chain', () => {
  it('stage + signal → review/resolve → complete → seal → promote → seal → search readback', async () => {
    const { dir } = project();
    const W = ['--workflow-root', dir];
    const ok = maestroOk(dir);
    await ok(['session', 'create', 's-1', '--objective', 'cache work']);
    await ok(['run', 'create', '--session', 's-1', '--run-id', 'run-1', '--activate']);
    // Near-duplicate of S-20260102-bbbb with an opposite stance → needs review; a new rule → eligible.
    const staged = await ok(['knowledge', 'stage', 'spec', 'Retry budget', 'Network calls must never retry more than three times; use exponential backoff and jitter.', '--category', 'coding', '--signal', 'validated', '--signal-ids', 'S-20260102-bbbb', '--run', 'run-1', '--session', 's-1']);
    expect(staged.candidate.candidate_id).toMatch(/^KDC-[a-f0-9]{16}$/);
    expect(staged.recorded).toEqual(['S-20260102-bbbb']);
    const fresh = await ok(['knowledge', 'stage', 'spec', 'Feature flags are read once', 'Feature flags are read once per request and passed down explicitly.', '--category', 'coding']);
    // An explicit load records consumed in the active run; a search does not.
    await ok(['load', '--id', 'S-20260101-aaaa']);
    await ok(['search', 'error codes']);
    const ledger = JSON.parse(readFileSync(join(dir, '.workflow', 'sessions', 's-1', 'runs', 'run-1', 'knowledge-delta.json'), 'utf8'));
    expect(ledger.inputs.map((i: { signal: string; source: string }) => `${i.signal}/${i.source}`).sort()).toEqual(['consumed/load', 'validated/manual']);

    let review = await ok(['knowledge', 'review', 's-1', '--refresh']);
    const near = review.candidates.find((c: { candidate_id: string }) => c.candidate_id === staged.candidate.candidate_id);
    expect(near.receipt).toBe('fresh');
    expect(near.promotion_eligibility).toBe('review_required');
    expect(near.canonical_id).toBe('S-20260102-bbbb');
    expect(near.matches.length).toBeGreaterThan(0);
    expect(near.matches.length).toBeLessThanOrEqual(3);
    expect(near.promote_command).toBeNull();
    expect(review.input_totals_by_source).toMatchObject({ load: 1, manual: 1, search: 0 });
    // Resolve as supersede: the new rule replaces the old one.
    const bad = await maestro(['knowledge', 'review', 's-1', '--resolve', near.candidate_id, '--as', 'supersede', '--reason', 'tightened', ...W]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/needs --target/);
    await ok(['knowledge', 'review', 's-1', '--resolve', near.candidate_id, '--as', 'supersede', '--target', 'S-20260102-bbbb', '--reason', 'the budget is now a hard limit']);

    writeFileSync(join(dir, '.workflow', 'sessions', 's-1', 'runs', 'run-1', 'report.md'), REPORT);
    const done = await ok(['run', 'complete', 'run-1', '--session', 's-1']);
    expect(done.candidate_ids).toHaveLength(4); // 2 staged + accepted decision + locked constraint; the proposed one is not a candidate
    // Promotion before the run is sealed is refused (hard gate).
    const early = await maestro(['knowledge', 'promote', 's-1', '--candidate', fresh.candidate.candidate_id, ...W]);
    expect(early.code).toBe(1);
    expect(early.stderr).toMatch(/not sealed/);
    await ok(['run', 'seal', 'run-1', '--session', 's-1']);
    const sealedStage = await maestro(['knowledge', 'stage', 'spec', 'Late', 'A late rule.', '--run', 'run-1', '--session', 's-1', ...W]);
    expect(sealedStage.code).toBe(1);
    expect(sealedStage.stderr).toMatch(/sealed/);

    const promoted = await ok(['knowledge', 'promote', 's-1', '--all']);
    expect(promoted.promoted.map((p: { outcome: string }) => p.outcome)).toEqual(['created', 'created', 'created', 'created']);
    const sup = promoted.promoted.find((p: { candidate_id: string }) => p.candidate_id === near.candidate_id);
    expect(sup.supersedes).toBe('S-20260102-bbbb');
    const again = await ok(['knowledge', 'promote', 's-1', '--candidate', `${fresh.candidate.candidate_id},${near.candidate_id}`]);
    expect(again.promoted).toEqual([]);
    expect(again.already_promoted.map((p: { candidate_id: string }) => p.candidate_id).sort()).toEqual([fresh.candidate.candidate_id, near.candidate_id].sort());

    const sealed = await ok(['session', 'seal', 's-1']);
    expect(sealed).toMatchObject({ schema: 'run-response/1.0', data: { backlog: 0, session: { status: 'completed' } } });

    // Readback: the promoted rules are searchable and loadable; the superseded one is deprecated.
    const hits = await ok(['search', 'settings cache invalidate write']);
    expect(hits.results.some((h: { name: string; aliases: string[] }) => /Invalidate the settings cache/.test(h.name) && h.aliases.some((a) => a.startsWith('S-')))).toBe(true);
    const spec = readFileSync(join(dir, '.workflow', 'specs', 'coding-conventions.md'), 'utf8');
    expect(spec).toMatch(/sid="S-20260102-bbbb"[^>]*status="deprecated"|status="deprecated"[^>]*sid="S-20260102-bbbb"/);
    expect(spec).toContain(`source="session:s-1:${fresh.candidate.candidate_id}"`);
    review = await ok(['knowledge', 'review', 's-1']);
    expect(review.candidates).toEqual([]);
  });

  it('unknown knowledge ids are refused and nothing is written; workflow roots do not see each other', async () => {
    const a = project();
    const b = project();
    expect((await maestro(['session', 'create', 's-a', '--workflow-root', a.dir])).code).toBe(0);
    expect((await maestro(['run', 'create', '--session', 's-a', '--run-id', 'run-a', '--workflow-root', a.dir])).code).toBe(0);
    const unknown = await maestro(['knowledge', 'record', 'S-20990101-zzzz', '--signal', 'cited', '--run', 'run-a', '--session', 's-a', '--workflow-root', a.dir]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/Unknown knowledge id: S-20990101-zzzz/);
    const stageUnknown = await maestro(['knowledge', 'stage', 'spec', 'T', 'Body text here.', '--signal', 'cited', '--signal-ids', 'nope-1', '--run', 'run-a', '--session', 's-a', '--workflow-root', a.dir]);
    expect(stageUnknown.code).toBe(1);
    expect(existsSync(join(a.dir, '.workflow', 'sessions', 's-a', 'runs', 'run-a', 'knowledge-delta.json'))).toBe(false);
    // Root b knows nothing of a's session.
    const other = await maestro(['knowledge', 'review', 's-a', '--workflow-root', b.dir]);
    expect(other.code).toBe(1);
    expect(other.stderr).toMatch(/No session s-a/);
    expect(existsSync(join(b.dir, '.workflow', 'sessions'))).toBe(false);
  });

  it('a corrupt ledger on disk exits 1 with CORRUPT_FILE naming the file (not 2: the command line was fine), and writes nothing', async () => {
    const { dir } = project();
    const W = ['--workflow-root', dir];
    expect((await maestro(['session', 'create', 's-1', ...W])).code).toBe(0);
    expect((await maestro(['run', 'create', '--session', 's-1', '--run-id', 'run-1', '--activate', ...W])).code).toBe(0);
    expect((await maestro(['knowledge', 'stage', 'spec', 'T', 'Queues drain before shutdown.', '--run', 'run-1', '--session', 's-1', ...W])).code).toBe(0);
    const ledger = join(dir, '.workflow', 'sessions', 's-1', 'runs', 'run-1', 'knowledge-delta.json');
    writeFileSync(ledger, '{"schema_version": ');
    const r = await maestro(['knowledge', 'stage', 'spec', 'U', 'Another rule.', '--run', 'run-1', '--session', 's-1', ...W, '--json']);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout).error).toMatchObject({ code: 'CORRUPT_FILE', message: expect.stringContaining(`${ledger}: not valid JSON`) });
    const plain = await maestro(['knowledge', 'stage', 'spec', 'U', 'Another rule.', '--run', 'run-1', '--session', 's-1', ...W]);
    expect(plain.code).toBe(1);
    expect(plain.stderr).toContain(ledger);
    expect(readFileSync(ledger, 'utf8')).toBe('{"schema_version": ');
  });

  it('sealing the active run makes it no longer the active one: a record without --run then asks for a run', async () => {
    const { dir } = project();
    const W = ['--workflow-root', dir];
    expect((await maestro(['session', 'create', 's-1', ...W])).code).toBe(0);
    expect((await maestro(['run', 'create', '--session', 's-1', '--run-id', 'run-1', '--activate', ...W])).code).toBe(0);
    // Without --run: into the active run.
    expect((await maestro(['knowledge', 'stage', 'spec', 'T', 'Queues drain before shutdown.', ...W])).code).toBe(0);
    expect((await maestro(['run', 'seal', 'run-1', '--session', 's-1', ...W])).code).toBe(0);
    expect(readFileSync(join(dir, '.workflow', 'sessions', '.active-run'), 'utf8')).toBe('');
    const r = await maestro(['knowledge', 'stage', 'spec', 'U', 'Another rule.', ...W, '--json']);
    expect(r.code).not.toBe(0);
    expect(JSON.parse(r.stdout).error).toMatchObject({ code: 'BAD_INPUT', message: expect.stringMatching(/^No run given and no active run/) });
  });

  it('load in an active run whose run.json does not read prints the entry and says, naming the file, that it was not recorded', async () => {
    const { dir } = project();
    const W = ['--workflow-root', dir];
    expect((await maestro(['session', 'create', 's-1', ...W])).code).toBe(0);
    expect((await maestro(['run', 'create', '--session', 's-1', '--run-id', 'run-1', '--activate', ...W])).code).toBe(0);
    const run = join(dir, '.workflow', 'sessions', 's-1', 'runs', 'run-1');
    writeFileSync(join(run, 'run.json'), 'null');
    const r = await maestro(['load', '--id', 'S-20260101-aaaa', ...W, '--json']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).entries.map((e: { sid: string }) => e.sid)).toEqual(['S-20260101-aaaa']);
    expect(r.stderr).toBe(`maestro: The load is not recorded as consumed in the run: ${join(run, 'run.json')}: must hold a JSON object, found null.\n`);
    expect(readFileSync(join(run, 'run.json'), 'utf8')).toBe('null');
    expect(existsSync(join(run, 'knowledge-delta.json'))).toBe(false);
  });

  it('session list lists the sessions it can read and names each folder it cannot, with why, changing nothing', async () => {
    const { dir } = project();
    const W = ['--workflow-root', dir];
    for (const sid of ['s-good', 's-corrupt', 's-array']) expect((await maestro(['session', 'create', sid, ...W])).code).toBe(0);
    const sessions = join(dir, '.workflow', 'sessions');
    writeFileSync(join(sessions, 's-corrupt', 'session.json'), '{"session_id": ');
    writeFileSync(join(sessions, 's-array', 'session.json'), '[]');
    mkdirSync(join(sessions, 's-empty'));
    const text = await maestro(['session', 'list', ...W]);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^s-good {2}open {2}\n$/);
    expect(text.stderr.trimEnd().split('\n')).toEqual([
      `maestro: not listed, session.json missing or unreadable: sessions/s-array: ${join(sessions, 's-array', 'session.json')}: must hold a JSON object, found [].`,
      expect.stringMatching(new RegExp(`^maestro: not listed, session\\.json missing or unreadable: sessions/s-corrupt: ${join(sessions, 's-corrupt', 'session.json')}: not valid JSON \\(`)),
      `maestro: not listed, session.json missing or unreadable: sessions/s-empty: ${join(sessions, 's-empty', 'session.json')} is missing.`,
    ]);
    const json = await maestro(['session', 'list', ...W, '--json']);
    expect(json.code).toBe(0);
    const out = JSON.parse(json.stdout);
    expect(out.sessions.map((s: { session_id: string }) => s.session_id)).toEqual(['s-good']);
    expect(out.unreadable).toEqual([
      { session_id: 's-array', error: `${join(sessions, 's-array', 'session.json')}: must hold a JSON object, found [].` },
      { session_id: 's-corrupt', error: expect.stringContaining(`${join(sessions, 's-corrupt', 'session.json')}: not valid JSON (`) },
      { session_id: 's-empty', error: `${join(sessions, 's-empty', 'session.json')} is missing.` },
    ]);
    expect(readFileSync(join(sessions, 's-corrupt', 'session.json'), 'utf8')).toBe('{"session_id": ');
    expect(readFileSync(join(sessions, 's-array', 'session.json'), 'utf8')).toBe('[]');
  });
  it("review's command to copy promotes as printed, also for a run not sealed yet: it seals the run first", async () => {
    const { dir } = project();
    const W = ['--workflow-root', dir];
    const ok = maestroOk(dir);
    await ok(['session', 'create', 's-1']);
    await ok(['run', 'create', '--session', 's-1', '--run-id', 'run-1', '--activate']);
    await ok(['knowledge', 'stage', 'spec', 'Feature flags are read once', 'Feature flags are read once per request and passed down explicitly.', '--category', 'coding']);
    const review = await maestro(['knowledge', 'review', 's-1', '--refresh', ...W]);
    expect(review.code).toBe(0);
    const printed = review.stdout.split('\n').filter((l) => l.trim().startsWith('$ ')).map((l) => l.trim().slice(2));
    expect(printed).toHaveLength(1);
    // What a person pastes into a shell: each `&&` step runs, in order, and must succeed for the next.
    const steps = printed[0]!.split(' && ');
    expect(steps[0]).toBe('maestro run seal run-1 --session s-1');
    for (const step of steps) {
      const r = await maestro([...step.split(' ').slice(1), ...W]);
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
    }
    expect(readFileSync(join(dir, '.workflow', 'specs', 'coding-conventions.md'), 'utf8')).toContain('Feature flags are read once per request and passed down explicitly.');
  });
});
