/**
 * wiki-maintain (Phase 2, manual): `--list-audits`, `--dry-run` (open audits
 * + lint + intent bucket statistics) and apply. Apply is deterministic unless
 * a maintainer agent is injected: it moves leftover legacy folders to
 * knowledge/.trash/<stamp>/ (never deletes), rebuilds index.md, and resolves
 * audits whose target was removed or updated after the audit was filed; an
 * agent may resolve more. Every action is logged. An audit that cannot be
 * resolved (its file changed since it was listed) is reported and left as it
 * was; the others are resolved all the same.
 */
import { existsSync, mkdirSync, readdirSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { MaestroError } from '../../core/errors.js';
import { loadBundle } from '../bundle/store.js';
import { listWikiEntries } from '../../knowledge/format/wiki/entries.js';
import { ensureWikiLayout, LEGACY_DIRS, wikiLayout } from '../../knowledge/format/wiki/layout.js';
import { INTENT_KEYS } from '../curation/intent.js';
import { appendKnowledgeLog, rebuildKnowledgeIndex } from '../wiki/log.js';
import { listAudits, resolveAudit, type AuditRecord, type UnreadableAudit } from './audit.js';
import { lintWiki, type LintFinding } from './lint.js';

export interface BucketStats {
  sessions: number;
  buckets: number;
  curated: number;
  open: number;
  byStatus: Record<string, number>;
}

export interface MaintenanceReport {
  wikiRoot: string;
  openAudits: AuditRecord[];
  /** Files in the audit folders that are no audit (unreadable, or naming no target), and why: fixed or removed by hand. */
  unreadableAudits: UnreadableAudit[];
  lint: { errors: LintFinding[]; warnings: LintFinding[] };
  buckets: BucketStats;
}

export function bucketStats(wikiRoot: string, workspaceRoot: string): BucketStats {
  const layout = wikiLayout(wikiRoot);
  const stats: BucketStats = { sessions: 0, buckets: 0, curated: 0, open: 0, byStatus: {} };
  if (!existsSync(layout.sessions)) return stats;
  for (const id of readdirSync(layout.sessions)) {
    if (!existsSync(join(layout.sessions, id, 'bundle.json'))) continue;
    const bundle = loadBundle(layout, id, { workspaceRoot }).bundle;
    if (!bundle) continue;
    stats.sessions += 1;
    for (const b of Object.values(bundle.curation.buckets)) {
      stats.buckets += 1;
      if (b.curatedAt) {
        stats.curated += 1;
        const s = b.persistResult?.status ?? 'unknown';
        stats.byStatus[s] = (stats.byStatus[s] ?? 0) + 1;
      } else stats.open += 1;
    }
  }
  return stats;
}

export function buildMaintenanceReport(wikiRoot: string, workspaceRoot: string, now: Date): MaintenanceReport {
  const audits = listAudits(wikiRoot);
  return { wikiRoot, openAudits: audits.open, unreadableAudits: audits.unreadable, lint: lintWiki(wikiRoot, now), buckets: bucketStats(wikiRoot, workspaceRoot) };
}

/** The maintainer agent seam: given the report, which audits it resolved (after fixing entries itself). */
export type MaintainFn = (report: MaintenanceReport) => Promise<{ resolve?: Array<{ file: string; note: string }> }>;

export interface MaintenanceResult {
  movedLegacy: string[];
  resolved: AuditRecord[];
  /** Audits refused as they were about to be resolved (a file changed since it was listed), each left as it was, with why. */
  unresolved: Array<{ file: string; error: string }>;
  remaining: AuditRecord[];
  indexTotal: number;
  lint: { errors: LintFinding[]; warnings: LintFinding[] };
}

export async function applyMaintenance(wikiRoot: string, workspaceRoot: string, opts: { now: () => Date; maintain?: MaintainFn }): Promise<MaintenanceResult> {
  const layout = wikiLayout(wikiRoot);
  const movedLegacy: string[] = [];
  for (const dir of LEGACY_DIRS) {
    const from = join(layout.knowledge, dir);
    if (!existsSync(from)) continue;
    const trash = join(layout.knowledge, '.trash', opts.now().toISOString().replace(/[:.]/g, '-'));
    mkdirSync(trash, { recursive: true });
    renameSync(from, join(trash, dir));
    movedLegacy.push(from);
    appendKnowledgeLog(wikiRoot, 'compile', dir, 'legacy_dir_moved_to_trash', opts.now());
  }
  ensureWikiLayout(wikiRoot, INTENT_KEYS);
  const { entries } = listWikiEntries(wikiRoot);
  rebuildKnowledgeIndex(wikiRoot, entries, opts.now());
  appendKnowledgeLog(wikiRoot, 'compile', 'index.md', `rebuilt (${entries.length} entries)`, opts.now());

  const resolved: AuditRecord[] = [];
  const unresolved: MaintenanceResult['unresolved'] = [];
  // Each audit is its own file: one refused (changed since it was listed) leaves it as it was and the rest go on.
  const resolve = (file: string, note: string) => {
    try {
      const done = resolveAudit(wikiRoot, file, note, opts.now());
      resolved.push(done);
      appendKnowledgeLog(wikiRoot, 'audit', done.targetId, `resolved: ${note}`, opts.now());
    } catch (err) {
      if (!(err instanceof MaestroError)) throw err;
      unresolved.push({ file, error: err.message });
    }
  };
  const byId = new Map(entries.map((e) => [e.id, e]));
  for (const audit of listAudits(wikiRoot).open) {
    const target = byId.get(audit.targetId);
    const updatedAfter = target?.updated && audit.filedAt && Date.parse(target.updated) > Date.parse(audit.filedAt);
    const note = !target ? `target ${audit.targetId} no longer exists` : updatedAfter ? `target ${audit.targetId} updated ${target.updated} after the audit` : null;
    if (note) resolve(audit.file, note);
  }
  if (opts.maintain) {
    const report = buildMaintenanceReport(wikiRoot, workspaceRoot, opts.now());
    const answer = await opts.maintain(report);
    const open = new Set(report.openAudits.map((a) => a.file));
    for (const r of answer.resolve ?? []) if (open.has(r.file)) resolve(r.file, r.note);
  }
  const lint = lintWiki(wikiRoot, opts.now());
  appendKnowledgeLog(wikiRoot, 'lint', 'wiki', `${lint.errors.length} errors, ${lint.warnings.length} warnings`, opts.now());
  return { movedLegacy, resolved, unresolved, remaining: listAudits(wikiRoot).open, indexTotal: entries.length, lint };
}
