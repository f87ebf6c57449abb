/**
 * `maestro knowledge audit --prune --apply`: backs every touched file up under
 * `.workflow/.trash/knowledge-audit-<stamp>/`, then deprecates (specs) or supersedes (knowhow) under the
 * corpus lock, all or nothing, and appends what it did to `.workflow/.knowledge-audit/audit-log.jsonl`.
 */
import { copyFileSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { MaestroError } from '../../../core/errors.js';
import { appendWhole } from '../../../lib/appendWhole.js';
import { writeFileAtomic, type AtomicWriteHooks } from '../../format/atomic.js';
import { supersedeKnowhow } from '../../format/knowhowWriter.js';
import { withCorpusLock } from '../../format/lock.js';
import { assertInsideRoot, type WorkflowRoot } from '../../format/root.js';
import { locateSpecEntry, upsertTagAttributes } from '../../format/specWriter.js';
import { stableId, type AuditResult, type PlanAction } from './context.js';

/** `hooks`: a test seam for the spec writes (format/atomic.ts). */
export function applyPlan(root: WorkflowRoot, plan: PlanAction[], now: Date, hooks: AtomicWriteHooks = {}): AuditResult['applied'] {
  const stamp = now.toISOString().replace(/[:.]/g, '-');
  const backupDir = join(root.workflowDir, '.trash', `knowledge-audit-${stamp}`);
  const files = [...new Set(plan.flatMap((p) => [p.target_file, p.successor_file]))].map((f) => join(root.projectDir, f));
  const log = join(root.workflowDir, '.knowledge-audit', 'audit-log.jsonl');
  // Before the lock (it creates files beside its targets): no file, backup or log a link leads out of .workflow/.
  for (const f of [...files, ...files.map((f) => join(backupDir, relative(root.projectDir, f))), log]) assertInsideRoot(root, f);
  return withCorpusLock(files, () => {
    for (const f of files) {
      const dst = join(backupDir, relative(root.projectDir, f));
      mkdirSync(dirname(dst), { recursive: true });
      copyFileSync(f, dst);
    }
    const auditId = stableId('AUD', stamp, ...plan.map((p) => p.id));
    let n = 0;
    // The files of the actions begun: a rollback restores these, not files no action reached (a person may be editing one).
    const begun = new Set<string>();
    try {
      for (const p of plan) {
        for (const f of [p.target_file, p.successor_file]) begun.add(join(root.projectDir, f));
        if (p.store === 'spec') {
          const loc = locateSpecEntry(root, p.target_id);
          const text = readFileSync(loc.file, 'utf8');
          writeFileAtomic(loc.file, upsertTagAttributes(text, loc.ordinal, { status: 'deprecated', 'superseded-by': p.successor_id }), hooks, text);
        } else supersedeKnowhow(root, p.target_id, p.successor_id);
        n++;
      }
    } catch (err) {
      // Roll back from the backup, byte for byte: all or nothing. Not the file another program saved while it was
      // being written (KNOWLEDGE_CONFLICT): nothing was written to it, and it keeps what they saved.
      const theirs = err instanceof MaestroError && err.code === 'KNOWLEDGE_CONFLICT' ? err.details?.file : undefined;
      for (const f of begun) if (f !== theirs) writeFileAtomic(f, readFileSync(join(backupDir, relative(root.projectDir, f))));
      throw err;
    }
    mkdirSync(dirname(log), { recursive: true });
    const at = new Date().toISOString();
    // The plan's lines in one append, all or nothing (lib/appendWhole.ts): a full disk leaves no part of a line to run into the next audit's.
    if (plan.length) appendWhole(log, plan.map((p) => `${JSON.stringify({ audit_id: auditId, action_id: p.id, store: p.store, target_id: p.target_id, action: p.action, reason: p.reason, applied_at: at, backup_path: relative(root.projectDir, backupDir) })}\n`).join(''));
    return { count: n, backup_dir: backupDir };
  });
}
