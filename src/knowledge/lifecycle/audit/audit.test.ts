/**
 * Audit and safe prune (FORMATS §4.6, seed 000 §9): findings, a deterministic
 * plan, backup-then-apply, nothing deleted — and the race the notes leave
 * open closed: no deprecation of an entry a fresh pending candidate targets
 * without --force.
 */
import { existsSync, mkdirSync, readFileSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { project, tmpDir } from '../../../../test/helpers/knowledge2.js';
import { reconcileSource, runSource } from '../reconcile/receipt.js';
import { stage } from '../session/ops.js';
import { createRun, createSession } from '../session/store.js';
import { parseSpecText } from '../../format/specParser.js';
import { applyPlan } from './apply.js';
import { audit } from './audit.js';
import type { PlanAction } from './context.js';
import { createLifecycleContext } from '../context.js';

// What the lifecycle operations keep between calls (the KnowledgeService's, in the daemon); no embedder here.
const lc = createLifecycleContext({ embedder: null });

const DUPS = `<spec-entry category="coding" keywords="a" date="2026-01-01" sid="S-20260101-aaaa" title="Use UTC">

### Use UTC

Store every timestamp in UTC.

</spec-entry>

<spec-entry category="coding" keywords="a" date="2026-01-05" sid="S-20260105-bbbb" title="Use UTC">

### Use UTC

Store every timestamp in UTC.

</spec-entry>

<spec-entry category="coding" keywords="a" date="2026-01-06" sid="S-20260106-cccc" title="Old logging" superseded-by="S-20260107-dddd">

### Old logging

Log with console.

</spec-entry>

<spec-entry category="coding" keywords="a" date="2026-01-07" sid="S-20260107-dddd" title="Structured logging" supersedes="S-20260106-cccc,S-20250101-gone">

### Structured logging

Log structured JSON.

</spec-entry>
`;

function setup() {
  const p = project({ specs: false });
  const file = join(p.root.workflowDir, 'specs', 'coding-conventions.md');
  writeFileSync(file, DUPS);
  return { p, file };
}

describe('knowledge audit', () => {
  it('finds duplicates, unsynchronized supersession and dangling refs; --prune plans deterministically; reading changes nothing', () => {
    const { p, file } = setup();
    const a = audit(lc, p.root, { scope: 'spec', prune: true, now: new Date('2026-08-20T02:19:16.123Z') });
    const subtypes = a.findings.map((f) => `${f.priority} ${f.subtype} ${f.target}`);
    // (Dated January, audited in August: the active entries are also stale observations, which never enter the plan.)
    expect(subtypes).toEqual(['P0 dangling-supersedes S-20260107-dddd', 'P1 exact-duplicate S-20260105-bbbb', 'P1 unsynchronized-supersession S-20260106-cccc', 'P2 stale-active-observation spec-store']);
    expect(a.findings.every((f) => /^KAU-[a-f0-9]{10}$/.test(f.id))).toBe(true);
    expect(a.prune_plan!.map((x) => [x.action, x.target_id, x.successor_id, x.reason])).toEqual([
      ['deprecate', 'S-20260105-bbbb', 'S-20260101-aaaa', 'exact-duplicate'],
      ['deprecate', 'S-20260106-cccc', 'S-20260107-dddd', 'unsynchronized-supersession'],
    ]);
    expect(audit(lc, p.root, { scope: 'spec', prune: true }).prune_plan).toEqual(a.prune_plan);
    expect(readFileSync(file, 'utf8')).toBe(DUPS);
    expect(() => audit(lc, p.root, { apply: true })).toThrow(/--apply requires --prune/);
  });

  it('--apply backs up first, soft-deprecates atomically, logs, deletes nothing', () => {
    const { p, file } = setup();
    const a = audit(lc, p.root, { scope: 'spec', prune: true, apply: true, now: new Date('2026-08-20T02:19:16.123Z') });
    expect(a.applied.count).toBe(2);
    expect(a.applied.backup_dir).toBe(join(p.root.workflowDir, '.trash', 'knowledge-audit-2026-08-20T02-19-16-123Z'));
    expect(readFileSync(join(a.applied.backup_dir!, '.workflow', 'specs', 'coding-conventions.md'), 'utf8')).toBe(DUPS);
    const entries = parseSpecText(readFileSync(file, 'utf8'), file).entries;
    expect(entries).toHaveLength(4);
    expect(entries.map((e) => `${e.sid}:${e.status}`)).toEqual(['S-20260101-aaaa:active', 'S-20260105-bbbb:deprecated', 'S-20260106-cccc:deprecated', 'S-20260107-dddd:active']);
    const log = readFileSync(join(p.root.workflowDir, '.knowledge-audit', 'audit-log.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    expect(log.map((l) => l.target_id)).toEqual(['S-20260105-bbbb', 'S-20260106-cccc']);
    expect(audit(lc, p.root, { scope: 'spec', prune: true }).prune_plan).toEqual([]);
  });

  it('a plan that fails part way puts every file it backed up back byte for byte, bytes that are not UTF-8 included', () => {
    const { p, file } = setup();
    // A successor's file is backed up and restored with the rest; one that is not UTF-8 text must come back as it was,
    // not with U+FFFD for its byte 0xE9.
    const latin1 = join(p.root.workflowDir, 'specs', 'notes.md');
    const bytes = Buffer.concat([Buffer.from('# Caf'), Buffer.from([0xe9]), Buffer.from('\r\n')]);
    writeFileSync(latin1, bytes);
    const action = (target_id: string): PlanAction => ({ id: `P-${target_id}`, store: 'spec', action: 'deprecate', target_id, target_file: '.workflow/specs/coding-conventions.md', successor_id: 'S-20260101-aaaa', successor_file: '.workflow/specs/notes.md', reason: 'exact-duplicate' });
    expect(() => applyPlan(p.root, [action('S-20260105-bbbb'), action('S-20991231-none')], new Date('2026-08-20T02:19:16.123Z'))).toThrow(/S-20991231-none/);
    expect(readFileSync(file, 'utf8')).toBe(DUPS);
    expect(readFileSync(latin1)).toEqual(bytes);
    expect(existsSync(join(p.root.workflowDir, '.knowledge-audit'))).toBe(false);
  });

  it('a plan stopped by a file another program saves meanwhile puts back the files it wrote, and leaves theirs as they saved it', () => {
    const { p, file } = setup();
    const other = join(p.root.workflowDir, 'specs', 'review-standards.md');
    const otherText = DUPS.replace(/S-2026010(\d)-(\w{4})/g, 'S-2026020$1-$2');
    writeFileSync(other, otherText);
    const theirs = `${otherText}\n<!-- saved by a person -->\n`;
    let writes = 0;
    const hooks = { beforeRename: () => void (++writes === 2 && writeFileSync(other, theirs)) };
    const action = (target_id: string, target: string): PlanAction => ({ id: `P-${target_id}`, store: 'spec', action: 'deprecate', target_id, target_file: `.workflow/specs/${target}`, successor_id: 'S-20260101-aaaa', successor_file: '.workflow/specs/coding-conventions.md', reason: 'exact-duplicate' });
    const plan = [action('S-20260105-bbbb', 'coding-conventions.md'), action('S-20260205-bbbb', 'review-standards.md')];
    expect(() => applyPlan(p.root, plan, new Date('2026-08-20T02:19:16.123Z'), hooks)).toThrow(expect.objectContaining({ code: 'KNOWLEDGE_CONFLICT' }));
    expect(readFileSync(file, 'utf8')).toBe(DUPS);
    expect(readFileSync(other, 'utf8')).toBe(theirs);
  });

  it('does not deprecate an entry that a fresh pending candidate targets, unless --force', () => {
    const { p, file } = setup();
    createSession(p.root, 's-1');
    createRun(p.root, 's-1', { runId: 'run-1' });
    stage(p.root, { target: 'spec', title: 'Use UTC', content: 'Store every timestamp in UTC, also in logs.', run: 'run-1', session: 's-1' }, process.env);
    reconcileSource(lc, p.root, runSource(p.root, 's-1', 'run-1'));
    expect(() => audit(lc, p.root, { scope: 'all', prune: true, apply: true })).toThrow(/pending candidates with fresh receipts target S-20260105-bbbb .*--force/);
    expect(readFileSync(file, 'utf8')).toBe(DUPS);
    expect(existsSync(join(p.root.workflowDir, '.trash'))).toBe(false);
    const forced = audit(lc, p.root, { scope: 'all', prune: true, apply: true, force: true });
    expect(forced.applied.count).toBe(2);
    expect(forced.pipeline).toMatchObject({ sessions: 1, ledgers: 1, pending_observed: 1, pending_corroborated: 0 });
    expect(readdirSync(join(p.root.workflowDir, '.trash'))).toHaveLength(1);
  });

  it('reports a corrupt ledger as a pipeline finding and keeps going', () => {
    const { p } = setup();
    createSession(p.root, 's-1');
    createRun(p.root, 's-1', { runId: 'run-1' });
    writeFileSync(runSource(p.root, 's-1', 'run-1').ledgerPath, 'nope');
    const a = audit(lc, p.root, { scope: 'all' });
    expect(a.findings.find((f) => f.subtype === 'invalid-knowledge-ledger')).toMatchObject({ store: 'pipeline', priority: 'P1' });
    expect(a.findings.some((f) => f.subtype === 'exact-duplicate')).toBe(true);
  });

  it("reports a run folder a repository linked outside as its session's problem, naming the link, and audits the rest", () => {
    const { p } = setup();
    for (const sid of ['s-1', 's-2']) {
      createSession(p.root, sid);
      createRun(p.root, sid, { runId: 'run-1' });
      stage(p.root, { target: 'spec', title: 'x', content: `Queues of ${sid} are drained before shutdown.`, run: 'run-1', session: sid }, process.env);
    }
    stage(p.root, { target: 'spec', title: 'y', content: 'Logs rotate daily.', session: 's-1' }, process.env);
    // s-1 gets a second run whose folder links to a folder outside, holding a ledger (never read).
    const elsewhere = join(tmpDir('maestro-elsewhere-'), 'run-2');
    mkdirSync(elsewhere, { recursive: true });
    writeFileSync(join(elsewhere, 'knowledge-delta.json'), 'TOPSECRET');
    const link = runSource(p.root, 's-1', 'run-2').dir;
    symlinkSync(elsewhere, link);
    const a = audit(lc, p.root, { scope: 'all' });
    const finding = a.findings.find((f) => f.target === 'sessions/s-1/runs/run-2');
    expect(finding).toMatchObject({ store: 'pipeline', priority: 'P1', subtype: 'invalid-session-authority', recommended_action: 'review' });
    expect(finding!.evidence).toContain(`Refusing to read ${link}: ${link} is a symbolic link leading to ${elsewhere}, outside the project's ${p.root.workflowDir}`);
    expect(JSON.stringify(a)).not.toContain('TOPSECRET');
    // Both sessions counted; s-1's session ledger and run-1, and s-2's run-1, audited.
    expect(a.pipeline).toMatchObject({ sessions: 2, ledgers: 3, pending_observed: 3 });
    expect(a.findings.some((f) => f.subtype === 'exact-duplicate')).toBe(true);
    expect(readdirSync(elsewhere)).toEqual(['knowledge-delta.json']);
  });

  it('names a session folder linked out of .workflow/ as its problem, with where it leads, and audits the other sessions', () => {
    const p = project();
    createSession(p.root, 's-1');
    createRun(p.root, 's-1', { runId: 'run-1' });
    stage(p.root, { target: 'spec', title: 'x', content: 'Queues are drained before shutdown.', run: 'run-1', session: 's-1' }, process.env);
    // A whole session folder a repository linked to a folder outside, with a session.json there (never read).
    const elsewhere = tmpDir('maestro-elsewhere-');
    writeFileSync(join(elsewhere, 'session.json'), 'TOPSECRET');
    const link = join(p.root.workflowDir, 'sessions', 's-2');
    symlinkSync(elsewhere, link);
    const a = audit(lc, p.root, { scope: 'all' });
    const finding = a.findings.find((f) => f.target === 'sessions/s-2');
    expect(finding).toMatchObject({ store: 'pipeline', priority: 'P1', subtype: 'invalid-session-authority', recommended_action: 'review' });
    expect(finding!.evidence).toContain(`${link} is a symbolic link leading to ${elsewhere}`);
    expect(JSON.stringify(a)).not.toContain('TOPSECRET');
    expect(a.pipeline).toMatchObject({ sessions: 1, ledgers: 1, pending_observed: 1 });
  });
});

describe('knowledge audit: metadata, code references, staleness', () => {
  const KNOWHOW: Record<string, string> = {
    // Both references hold: the file exists and names the symbol.
    'TIP-20260301-good.md': '---\ntitle: "Parse config once"\ntype: tip\nrelatedPaths:\n  - src/config.ts#loadConfig\n  - src/config.ts:3\n---\n\nCall loadConfig once at start-up.\n',
    // The file is gone, and a symbol that was renamed away.
    'TIP-20260301-ghost.md': '---\ntitle: "Old cache helper"\ntype: tip\ncodePaths:\n  - src/cache.ts\n  - src/config.ts::readConfigTwice\n  - ../outside-the-project.ts\n  - https://example.com/x.ts\n---\n\nUse the cache helper.\n',
    // A retired document may point at retired code: no ghost finding.
    'TIP-20260301-retired.md': '---\ntitle: "Retired"\ntype: tip\nstatus: deprecated\nrelatedPaths:\n  - src/removed.ts\n---\n\nGone.\n',
    // No title and no type in the frontmatter.
    'NOTE-untitled.md': '---\ndescription: "a note"\n---\n\n# A heading is not a title field\n\nSome text.\n',
  };
  const SPECS = `<spec-entry category="coding" keywords="a" date="2026-01-01" sid="S-20260101-old1" title="Old rule">

### Old rule

Written long ago.

</spec-entry>

<spec-entry category="coding" keywords="a" date="2026-08-01" sid="S-20260801-new1" title="New rule">

### New rule

Written recently.

</spec-entry>

<spec-entry category="coding" keywords="a" sid="S-20260101-nodate" title="Undated rule">

### Undated rule

No date: its age is unknown, so it is not called stale.

</spec-entry>
`;
  function setupHealth() {
    const p = project({ specs: false });
    mkdirSync(join(p.dir, 'src'), { recursive: true });
    writeFileSync(join(p.dir, 'src', 'config.ts'), 'export function loadConfig() {\n  return {};\n}\n');
    mkdirSync(join(p.root.workflowDir, 'knowhow'), { recursive: true });
    for (const [n, t] of Object.entries(KNOWHOW)) writeFileSync(join(p.root.workflowDir, 'knowhow', n), t);
    writeFileSync(join(p.root.workflowDir, 'specs', 'coding-conventions.md'), SPECS);
    return p;
  }
  const NOW = new Date('2026-08-20T00:00:00.000Z');

  it('reports the three with their published priorities and stable ids; they never enter the prune plan; --apply touches nothing', () => {
    const p = setupHealth();
    const before = snapshot(p.root.workflowDir);
    const a = audit(lc, p.root, { scope: 'all', prune: true, now: NOW });
    const mine = a.findings.filter((f) => ['ghost-code-reference', 'missing-required-metadata', 'stale-active-observation'].includes(f.subtype));
    expect(mine.map((f) => [f.priority, f.store, f.subtype, f.target, f.recommended_action])).toEqual([
      ['P1', 'knowhow', 'missing-required-metadata', 'knowhow-note-untitled', 'review'],
      ['P1', 'knowhow', 'ghost-code-reference', 'knowhow-tip-20260301-ghost', 'review'],
      ['P1', 'knowhow', 'ghost-code-reference', 'knowhow-tip-20260301-ghost', 'review'],
      ['P2', 'spec', 'stale-active-observation', 'spec-store', 'observe'],
    ]);
    const ghosts = mine.filter((f) => f.subtype === 'ghost-code-reference').map((f) => f.evidence).sort();
    expect(ghosts).toEqual([
      '.workflow/knowhow/TIP-20260301-ghost.md: references readConfigTwice in src/config.ts, which no longer names it',
      '.workflow/knowhow/TIP-20260301-ghost.md: references src/cache.ts, which does not exist',
    ]);
    expect(new Set(mine.map((f) => f.id)).size).toBe(4);
    expect(mine.find((f) => f.subtype === 'missing-required-metadata')!.evidence).toBe('.workflow/knowhow/NOTE-untitled.md has no title or type in its frontmatter');
    expect(mine.find((f) => f.subtype === 'stale-active-observation')!.evidence).toBe('1 active entry has freshness below 0.5 (dated more than 60 days ago): S-20260101-old1');
    expect(a.knowhow.invalid).toBe(1);
    // Deterministic: same ids and order on a second read.
    expect(audit(lc, p.root, { scope: 'all', prune: true, now: NOW }).findings).toEqual(a.findings);
    // Prune: observations and metadata problems are for people, not the plan.
    expect(a.prune_plan).toEqual([]);
    const applied = audit(lc, p.root, { scope: 'all', prune: true, apply: true, now: NOW });
    expect(applied.applied).toEqual({ count: 0, backup_dir: null });
    expect(snapshot(p.root.workflowDir)).toEqual(before);
    expect(existsSync(join(p.root.workflowDir, '.trash'))).toBe(false);
  });

  it('scopes: spec sees only the staleness, knowhow only metadata and references; fixing the cause clears the finding', () => {
    const p = setupHealth();
    expect(audit(lc, p.root, { scope: 'spec', now: NOW }).findings.map((f) => f.subtype)).toEqual(['stale-active-observation']);
    expect(new Set(audit(lc, p.root, { scope: 'knowhow', now: NOW }).findings.map((f) => f.subtype))).toEqual(new Set(['ghost-code-reference', 'missing-required-metadata']));
    writeFileSync(join(p.dir, 'src', 'cache.ts'), 'export function readConfigTwice() {}\n');
    writeFileSync(join(p.root.workflowDir, 'knowhow', 'NOTE-untitled.md'), '---\ntitle: "A note"\ntype: note\n---\n\nSome text.\n');
    // Sixty days after the old rule was written it is exactly at freshness 0.5, not below.
    expect(audit(lc, p.root, { scope: 'all', now: new Date('2026-03-02T00:00:00.000Z') }).findings.map((f) => f.subtype)).toEqual(['ghost-code-reference']);
  });
});

function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const e of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!e.isFile()) continue;
    const p = join(e.parentPath, e.name);
    out[p] = readFileSync(p, 'utf8');
  }
  return out;
}
