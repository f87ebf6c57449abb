/**
 * Audit and safe prune (FORMATS §4.6, seed 000 §9): findings, a deterministic
 * plan, backup-then-apply, nothing deleted — and the race the notes leave
 * open closed: no deprecation of an entry a fresh pending candidate targets
 * without --force.
 */
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { project } from '../../../test/helpers/knowledge2.js';
import { reconcileSource, runSource } from '../reconcile/receipt.js';
import { stage } from '../session/ops.js';
import { createRun, createSession } from '../session/store.js';
import { parseSpecText } from '../specParser.js';
import { audit } from './audit.js';

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
    const a = audit(p.root, { scope: 'spec', prune: true, now: new Date('2026-08-20T02:19:16.123Z') });
    const subtypes = a.findings.map((f) => `${f.priority} ${f.subtype} ${f.target}`);
    expect(subtypes).toEqual(['P0 dangling-supersedes S-20260107-dddd', 'P1 exact-duplicate S-20260105-bbbb', 'P1 unsynchronized-supersession S-20260106-cccc']);
    expect(a.findings.every((f) => /^KAU-[a-f0-9]{10}$/.test(f.id))).toBe(true);
    expect(a.prune_plan!.map((x) => [x.action, x.target_id, x.successor_id, x.reason])).toEqual([
      ['deprecate', 'S-20260105-bbbb', 'S-20260101-aaaa', 'exact-duplicate'],
      ['deprecate', 'S-20260106-cccc', 'S-20260107-dddd', 'unsynchronized-supersession'],
    ]);
    expect(audit(p.root, { scope: 'spec', prune: true }).prune_plan).toEqual(a.prune_plan);
    expect(readFileSync(file, 'utf8')).toBe(DUPS);
    expect(() => audit(p.root, { apply: true })).toThrow(/--apply requires --prune/);
  });

  it('--apply backs up first, soft-deprecates atomically, logs, deletes nothing', () => {
    const { p, file } = setup();
    const a = audit(p.root, { scope: 'spec', prune: true, apply: true, now: new Date('2026-08-20T02:19:16.123Z') });
    expect(a.applied.count).toBe(2);
    expect(a.applied.backup_dir).toBe(join(p.root.workflowDir, '.trash', 'knowledge-audit-2026-08-20T02-19-16-123Z'));
    expect(readFileSync(join(a.applied.backup_dir!, '.workflow', 'specs', 'coding-conventions.md'), 'utf8')).toBe(DUPS);
    const entries = parseSpecText(readFileSync(file, 'utf8'), file).entries;
    expect(entries).toHaveLength(4);
    expect(entries.map((e) => `${e.sid}:${e.status}`)).toEqual(['S-20260101-aaaa:active', 'S-20260105-bbbb:deprecated', 'S-20260106-cccc:deprecated', 'S-20260107-dddd:active']);
    const log = readFileSync(join(p.root.workflowDir, '.knowledge-audit', 'audit-log.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    expect(log.map((l) => l.target_id)).toEqual(['S-20260105-bbbb', 'S-20260106-cccc']);
    expect(audit(p.root, { scope: 'spec', prune: true }).prune_plan).toEqual([]);
  });

  it('does not deprecate an entry that a fresh pending candidate targets, unless --force', () => {
    const { p, file } = setup();
    createSession(p.root, 's-1');
    createRun(p.root, 's-1', { runId: 'run-1' });
    stage(p.root, { target: 'spec', title: 'Use UTC', content: 'Store every timestamp in UTC, also in logs.', run: 'run-1', session: 's-1' });
    reconcileSource(p.root, runSource(p.root, 's-1', 'run-1'));
    expect(() => audit(p.root, { scope: 'all', prune: true, apply: true })).toThrow(/pending candidates with fresh receipts target S-20260105-bbbb .*--force/);
    expect(readFileSync(file, 'utf8')).toBe(DUPS);
    expect(existsSync(join(p.root.workflowDir, '.trash'))).toBe(false);
    const forced = audit(p.root, { scope: 'all', prune: true, apply: true, force: true });
    expect(forced.applied.count).toBe(2);
    expect(forced.pipeline).toMatchObject({ sessions: 1, ledgers: 1, pending_observed: 1, pending_corroborated: 0 });
    expect(readdirSync(join(p.root.workflowDir, '.trash'))).toHaveLength(1);
  });

  it('reports a corrupt ledger as a pipeline finding and keeps going', () => {
    const { p } = setup();
    createSession(p.root, 's-1');
    createRun(p.root, 's-1', { runId: 'run-1' });
    writeFileSync(runSource(p.root, 's-1', 'run-1').ledgerPath, 'nope');
    const a = audit(p.root, { scope: 'all' });
    expect(a.findings.find((f) => f.subtype === 'invalid-knowledge-ledger')).toMatchObject({ store: 'pipeline', priority: 'P1' });
    expect(a.findings.some((f) => f.subtype === 'exact-duplicate')).toBe(true);
  });
});
