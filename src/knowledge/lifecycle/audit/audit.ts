/**
 * `maestro knowledge audit` (FORMATS §4.6, seed 000 §9): read-only findings
 * over specs, knowhow, ledgers and usage; `--prune` adds a deterministic
 * soft-prune plan; `--apply` backs every touched file up under
 * `.workflow/.trash/knowledge-audit-<stamp>/` and then deprecates or
 * supersedes. Nothing is deleted, and usage alone never prunes. Unlike the
 * notes, an entry that a fresh pending candidate targets is not deprecated
 * without `--force` (the race seed 000 §9 leaves open).
 */
import { appendFileSync, copyFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { MaestroError } from '../../../core/errors.js';
import { writeFileAtomic } from '../../format/atomic.js';
import { effectiveDeprecated, knowhowSource, loadCorpus, specSource } from '../../format/corpus.js';
import { parseKnowhowText } from '../../format/knowhowParser.js';
import type { KnowledgeEntry } from '../../format/entry.js';
import { readLedger } from '../ledger/ledger.js';
import { normA, sha256 } from '../ledger/recipes.js';
import type { CorpusSnapshot } from '../ledger/corpusDocs.js';
import type { LifecycleContext } from '../context.js';
import { withCorpusLock } from '../../format/lock.js';
import { supersedeKnowhow } from '../../format/knowhowWriter.js';
import { freshness, readSourceState, sessionSources, tryReadReceipt } from '../reconcile/receipt.js';
import { assertInsideRoot, type WorkflowRoot } from '../../format/root.js';
import { listSessions, sessionsDir } from '../session/store.js';
import { locateSpecEntry, upsertTagAttributes } from '../../format/specWriter.js';
import { readdirSync } from 'node:fs';
import { ghostReference } from './ghostReference.js';

export interface Finding {
  id: string;
  store: 'spec' | 'knowhow' | 'pipeline' | 'usage';
  priority: 'P0' | 'P1' | 'P2';
  subtype: string;
  target: string;
  evidence: string;
  recommended_action: 'observe' | 'review' | 'deprecate';
}

export interface PlanAction {
  id: string;
  store: 'spec' | 'knowhow';
  action: 'deprecate' | 'supersede';
  target_id: string;
  target_file: string;
  successor_id: string;
  successor_file: string;
  reason: 'unsynchronized-supersession' | 'exact-duplicate';
}

export interface AuditResult {
  schema: 'knowledge-audit/1.0';
  scope: string;
  generated_at: string;
  spec_health: { total: number; active: number; deprecated: number; findings: number };
  knowhow: { total: number; active: number; deprecated: number; invalid: number };
  usage: { consumed_total: number; distinct: number; top10_share: number; gini: number };
  pipeline: { sessions: number; ledgers: number; pending_observed: number; pending_corroborated: number; promoted: number };
  findings: Finding[];
  prune_plan?: PlanAction[];
  applied: { count: number; backup_dir: string | null };
  safety: { usage_only_never_pruned: true; physical_delete: false; apply_requires_prune: true };
}

const stableId = (prefix: string, ...parts: string[]) => `${prefix}-${sha256(parts.join('\0')).slice(0, 10)}`;
const PRI = { P0: 0, P1: 1, P2: 2 };

function gini(xs: number[]): number {
  if (xs.length < 2) return 0;
  const s = [...xs].sort((a, b) => a - b);
  const total = s.reduce((a, b) => a + b, 0);
  if (!total) return 0;
  let cum = 0;
  s.forEach((x, i) => (cum += (2 * (i + 1) - s.length - 1) * x));
  return cum / (s.length * total);
}

/** What every audit step reads and appends to: the corpus, its lookups, and the findings and plan so far. */
interface AuditContext {
  lc: LifecycleContext;
  root: WorkflowRoot;
  scope: string;
  now: Date;
  corpus: ReturnType<typeof loadCorpus>;
  entries: KnowledgeEntry[];
  specs: KnowledgeEntry[];
  knowhow: KnowledgeEntry[];
  byRef: Map<string, KnowledgeEntry>;
  findings: Finding[];
  plan: PlanAction[];
  add: (store: Finding['store'], priority: Finding['priority'], subtype: string, target: string, evidence: string, recommended_action: Finding['recommended_action'], ...idParts: string[]) => void;
  key: (e: KnowledgeEntry) => string;
  rel: (f: string) => string;
  inScope: (e: KnowledgeEntry) => boolean;
  planFor: (t: KnowledgeEntry, s: KnowledgeEntry, reason: PlanAction['reason']) => PlanAction;
}

type AuditOptions = { scope?: string; prune?: boolean; apply?: boolean; force?: boolean; now?: Date };

/**
 * The steps run in a fixed order: findings with equal sort keys keep the
 * order they were added in, and an exact duplicate already planned as an
 * unsynchronized supersession is not planned twice.
 */
export function audit(lc: LifecycleContext, root: WorkflowRoot, opts: AuditOptions = {}): AuditResult {
  const scope = opts.scope ?? 'all';
  if (!['spec', 'knowhow', 'all'].includes(scope)) throw new MaestroError('BAD_INPUT', `--scope must be spec|knowhow|all (got ${scope}).`);
  if (opts.apply && !opts.prune) throw new MaestroError('BAD_INPUT', '--apply requires --prune (review the plan first).');
  const ctx = auditContext(lc, root, scope, opts.now ?? new Date());
  checkSupersession(ctx);
  const deprecatedNow = effectiveDeprecated(ctx.entries);
  const knowhowInvalid = scope !== 'spec' ? checkKnowhowFiles(ctx, deprecatedNow) : new Set<string>();
  if (scope !== 'knowhow') checkStaleSpecs(ctx, deprecatedNow);
  checkDuplicates(ctx);
  const { pipeline, consumed, pendingTargets } = auditPipeline(ctx);
  const usage = usageOf(ctx, consumed);
  const result = summarize(ctx, opts, knowhowInvalid, pipeline, usage);
  if (opts.apply && ctx.plan.length) {
    const contested = ctx.plan.filter((p) => pendingTargets.has(p.target_id));
    if (contested.length && !opts.force)
      throw new MaestroError('KNOWLEDGE_CONFLICT', `Refusing to prune: pending candidates with fresh receipts target ${contested.map((p) => `${p.target_id} (${pendingTargets.get(p.target_id)!.join(', ')})`).join('; ')}. Review them first (maestro knowledge review <session>) or re-run with --force.`);
    result.applied = applyPlan(root, ctx.plan, ctx.now);
  }
  return result;
}

function auditContext(lc: LifecycleContext, root: WorkflowRoot, scope: string, now: Date): AuditContext {
  const findings: Finding[] = [];
  const add: AuditContext['add'] = (store, priority, subtype, target, evidence, recommended_action, ...idParts) => {
    findings.push({ id: stableId('KAU', store, subtype, target, ...idParts), store, priority, subtype, target, evidence, recommended_action });
  };
  const corpus = loadCorpus([specSource(root), knowhowSource(root)]);
  const entries = corpus.entries.filter((e) => e.scope === 'project');
  const byRef = new Map<string, KnowledgeEntry>();
  for (const e of entries) for (const a of [e.id, ...e.aliases, ...(e.sid ? [e.sid] : [])]) if (!byRef.has(a)) byRef.set(a, e);
  const key = (e: KnowledgeEntry) => (e.kind === 'spec' ? (e.sid ?? e.id) : e.id);
  const rel = (f: string) => relative(root.projectDir, f);
  const planFor = (t: KnowledgeEntry, s: KnowledgeEntry, reason: PlanAction['reason']): PlanAction => {
    const store = t.kind as 'spec' | 'knowhow';
    const action = store === 'spec' ? 'deprecate' : 'supersede';
    return { id: stableId('KPA', store, action, key(t), key(s), reason), store, action, target_id: key(t), target_file: rel(t.file), successor_id: key(s), successor_file: rel(s.file), reason };
  };
  return {
    lc,
    root,
    scope,
    now,
    corpus,
    entries,
    specs: entries.filter((e) => e.kind === 'spec'),
    knowhow: entries.filter((e) => e.kind === 'knowhow'),
    byRef,
    findings,
    plan: [],
    add,
    key,
    rel,
    inScope: (e) => scope === 'all' || e.kind === scope,
    planFor,
  };
}

/** Bad frontmatter, missing sids, dangling or cyclic supersession links, and supersessions not yet applied. */
function checkSupersession(ctx: AuditContext): void {
  const { scope, add, rel, key, byRef, entries } = ctx;
  for (const f of ctx.corpus.findings) if (f.code === 'bad-frontmatter' && (scope === 'all' || (scope === 'knowhow') === f.file.includes('/knowhow/'))) add(f.file.includes('/knowhow/') ? 'knowhow' : 'spec', 'P1', 'invalid-frontmatter', rel(f.file), `${f.message} (line ${f.line})`, 'review');

  for (const e of entries.filter(ctx.inScope)) {
    const store = e.kind as 'spec' | 'knowhow';
    if (store === 'spec' && !e.sid && e.aliases.every((a) => !a.startsWith('legacy:'))) add('spec', 'P2', 'missing-stable-id', e.id, `${rel(e.file)}:${e.line} has no sid`, 'review');
    for (const ref of e.supersedes) if (!byRef.has(ref)) add(store, 'P0', 'dangling-supersedes', key(e), `supersedes ${ref}, which does not exist`, 'review');
    if (e.supersededBy && !byRef.has(e.supersededBy)) add(store, 'P0', 'dangling-superseded-by', key(e), `superseded-by ${e.supersededBy}, which does not exist`, 'review');
    // Unsynchronized: named as superseded (either side) but still active.
    const successor = e.supersededBy ? byRef.get(e.supersededBy) : entries.find((o) => o !== e && o.declaredStatus === 'active' && o.supersedes.some((r) => byRef.get(r) === e));
    if (successor && e.declaredStatus === 'active' && successor !== e) {
      add(store, 'P1', 'unsynchronized-supersession', key(e), `superseded by ${key(successor)} but still active`, 'deprecate');
      ctx.plan.push(ctx.planFor(e, successor, 'unsynchronized-supersession'));
    }
    // Cycle: follow superseded-by.
    const seen = new Set<KnowledgeEntry>([e]);
    for (let cur = e.supersededBy ? byRef.get(e.supersededBy) : undefined; cur; cur = cur.supersededBy ? byRef.get(cur.supersededBy) : undefined) {
      if (cur === e) {
        add(store, 'P0', 'supersession-cycle', key(e), 'superseded-by chain returns to this entry', 'review');
        break;
      }
      if (seen.has(cur)) break;
      seen.add(cur);
    }
  }
}

/** Knowhow metadata and code references (read from each file's own frontmatter); returns the files with missing metadata. */
function checkKnowhowFiles(ctx: AuditContext, deprecatedNow: Set<string>): Set<string> {
  const { add, rel, key } = ctx;
  const knowhowInvalid = new Set<string>();
  for (const e of ctx.knowhow) {
    let text: string;
    try {
      text = readFileSync(e.file, 'utf8');
    } catch {
      continue;
    }
    const doc = parseKnowhowText(text, e.file);
    const fm = doc.frontmatter.data;
    const missing = ['title', 'type'].filter((k) => typeof fm[k] !== 'string' || !(fm[k] as string).trim());
    if (missing.length) {
      knowhowInvalid.add(e.file);
      add('knowhow', 'P1', 'missing-required-metadata', key(e), `${rel(e.file)} has no ${missing.join(' or ')} in its frontmatter`, 'review');
    }
    if (deprecatedNow.has(e.id)) continue; // a retired document may point at retired code
    for (const ref of doc.codePaths) {
      const ghost = ghostReference(ctx.root.projectDir, ref);
      if (ghost) add('knowhow', 'P1', 'ghost-code-reference', key(e), `${rel(e.file)}: ${ghost}`, 'review', ref);
    }
  }
  return knowhowInvalid;
}

/** Stale active specs: freshness 2^(−age/60 d) (the spec half-life of FORMATS §5.1) below 0.5. */
function checkStaleSpecs(ctx: AuditContext, deprecatedNow: Set<string>): void {
  const stale = ctx.specs
    .filter((e) => e.declaredStatus === 'active' && !deprecatedNow.has(e.id) && e.date)
    .map((e) => ({ e, f: freshnessOf(e.date!, ctx.now) }))
    .filter((x) => x.f !== null && x.f < 0.5)
    .map((x) => ctx.key(x.e))
    .sort();
  if (stale.length)
    ctx.add('spec', 'P2', 'stale-active-observation', 'spec-store', `${stale.length} active entr${stale.length === 1 ? 'y has' : 'ies have'} freshness below 0.5 (dated more than ${SPEC_HALF_LIFE_DAYS} days ago): ${stale.slice(0, 10).join(', ')}${stale.length > 10 ? ` (+${stale.length - 10} more)` : ''}`, 'observe', ...stale);
}

/** Exact duplicates among active entries: canonical = lowest id. */
function checkDuplicates(ctx: AuditContext): void {
  const { key, plan } = ctx;
  for (const group of [ctx.specs, ctx.knowhow]) {
    const byKey = new Map<string, KnowledgeEntry[]>();
    for (const e of group.filter((x) => x.declaredStatus === 'active' && ctx.inScope(x))) {
      const k = `${normA(e.title)}\0${normA(e.body.replace(/^\s*###[^\n]*\n?/, ''))}`;
      byKey.set(k, [...(byKey.get(k) ?? []), e]);
    }
    for (const dups of byKey.values()) {
      if (dups.length < 2) continue;
      dups.sort((a, b) => key(a).localeCompare(key(b)));
      for (const d of dups.slice(1)) {
        ctx.add(d.kind as 'spec', 'P1', 'exact-duplicate', key(d), `same title and content as ${key(dups[0]!)}`, 'deprecate');
        if (!plan.some((p) => p.target_id === key(d))) plan.push(ctx.planFor(d, dups[0]!, 'exact-duplicate'));
      }
    }
  }
}

type PipelineCounts = AuditResult['pipeline'];

/** Pipeline: sessions, ledgers, backlog (only for scope `all`). Also returns consumption counts and which entries fresh pending candidates target. */
function auditPipeline(ctx: AuditContext): { pipeline: PipelineCounts; consumed: Map<string, number>; pendingTargets: Map<string, string[]> } {
  const pipeline: PipelineCounts = { sessions: 0, ledgers: 0, pending_observed: 0, pending_corroborated: 0, promoted: 0 };
  const consumed = new Map<string, number>();
  const pendingIn = new Map<string, number>();
  const pendingTargets = new Map<string, string[]>();
  if (ctx.scope !== 'all') return { pipeline, consumed, pendingTargets };
  const { root, add } = ctx;
  const sdir = sessionsDir(root);
  const names = existsSync(sdir) ? readdirSync(sdir, { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name) : [];
  const good = new Set(listSessions(root).map((s) => s.session_id));
  for (const n of names) if (!good.has(n)) add('pipeline', 'P1', 'invalid-session-authority', `sessions/${n}`, 'session.json missing or unreadable', 'review');
  const corpus = ctx.lc.corpus.read(root.workflowDir);
  for (const sid of good) {
    pipeline.sessions++;
    for (const src of sessionSources(root, sid)) auditSource(ctx, sid, src, corpus, { pipeline, consumed, pendingIn, pendingTargets });
  }
  for (const [id, n] of pendingIn) {
    if (n > 1) {
      pipeline.pending_corroborated++;
      add('pipeline', 'P2', 'corroborated-promotion-backlog', id, `pending in ${n} ledgers`, 'review');
    } else pipeline.pending_observed++;
  }
  return { pipeline, consumed, pendingTargets };
}

/** One run's ledger: consumption, promoted and pending candidates, and what the pending ones target when the receipt is fresh. */
function auditSource(
  ctx: AuditContext,
  sid: string,
  src: ReturnType<typeof sessionSources>[number],
  corpus: CorpusSnapshot,
  acc: { pipeline: PipelineCounts; consumed: Map<string, number>; pendingIn: Map<string, number>; pendingTargets: Map<string, string[]> },
): void {
  const { add, rel } = ctx;
  const { pipeline, consumed, pendingIn, pendingTargets } = acc;
  if (!existsSync(src.ledgerPath)) return;
  let ledger;
  try {
    ledger = readLedger(src.ledgerPath)!;
  } catch (err) {
    add('pipeline', 'P1', 'invalid-knowledge-ledger', rel(src.ledgerPath), (err as Error).message, 'review');
    return;
  }
  pipeline.ledgers++;
  for (const i of ledger.inputs) if (i.signal === 'consumed') consumed.set(i.knowledge_id, (consumed.get(i.knowledge_id) ?? 0) + i.count);
  let state;
  try {
    state = readSourceState(src);
  } catch (err) {
    // A corrupt promotion receipt or report: its candidates cannot be counted as promoted or pending.
    add('pipeline', 'P1', 'invalid-run-file', rel(src.dir), (err as Error).message, 'review');
    return;
  }
  const { receipt, corrupt } = tryReadReceipt(src);
  if (corrupt) add('pipeline', 'P2', 'invalid-reconciliation-receipt', rel(src.receiptPath), corrupt.message, 'review');
  const fresh = freshness(ctx.lc, src, receipt, state, corpus, corrupt).state === 'fresh';
  for (const cand of ledger.candidates) {
    const promotedNow = !state.candidates.some((x) => x.candidate_id === cand.candidate_id) && cand.status !== 'rejected';
    if (cand.status === 'promoted' || promotedNow) {
      pipeline.promoted++;
      continue;
    }
    if (cand.status !== 'pending') continue;
    pendingIn.set(cand.candidate_id, (pendingIn.get(cand.candidate_id) ?? 0) + 1);
    const r = receipt?.candidates.find((x) => x.candidate_id === cand.candidate_id);
    if (fresh && r) for (const m of r.matches) pendingTargets.set(m.knowledge_id, [...(pendingTargets.get(m.knowledge_id) ?? []), `${cand.candidate_id} (${sid}/${src.rid})`]);
  }
}

/** Consumption concentration: top-10 share and Gini over consumed counts; flags a usage finding (usage alone never prunes). */
function usageOf(ctx: AuditContext, consumed: Map<string, number>): AuditResult['usage'] {
  const counts = [...consumed.values()].sort((a, b) => b - a);
  const total = counts.reduce((a, b) => a + b, 0);
  const top10 = total ? counts.slice(0, 10).reduce((a, b) => a + b, 0) / total : 0;
  const g = gini(counts);
  if (counts.length > 10 && (top10 > 0.75 || g > 0.65)) ctx.add('usage', 'P2', 'exposure-concentration', 'consumption', `top-10 share ${top10.toFixed(2)}, Gini ${g.toFixed(2)} over ${counts.length} entries`, 'observe');
  return { consumed_total: total, distinct: counts.length, top10_share: top10, gini: g };
}

/** Sorts findings and plan (deterministic output) and builds the result, not yet applied. */
function summarize(ctx: AuditContext, opts: AuditOptions, knowhowInvalid: Set<string>, pipeline: PipelineCounts, usage: AuditResult['usage']): AuditResult {
  const { findings, plan, specs, knowhow, corpus: c } = ctx;
  findings.sort((a, b) => PRI[a.priority] - PRI[b.priority] || a.store.localeCompare(b.store) || a.target.localeCompare(b.target) || a.id.localeCompare(b.id));
  plan.sort((a, b) => a.target_id.localeCompare(b.target_id));
  return {
    schema: 'knowledge-audit/1.0',
    scope: ctx.scope,
    generated_at: ctx.now.toISOString(),
    spec_health: { total: specs.length, active: specs.filter((e) => e.declaredStatus === 'active').length, deprecated: specs.filter((e) => e.declaredStatus !== 'active').length, findings: c.findings.filter((f) => !f.file.includes('/knowhow/')).length },
    knowhow: { total: knowhow.length, active: knowhow.filter((e) => e.declaredStatus === 'active').length, deprecated: knowhow.filter((e) => e.declaredStatus !== 'active').length, invalid: new Set([...c.findings.filter((f) => f.file.includes('/knowhow/')).map((f) => f.file), ...knowhowInvalid]).size },
    usage,
    pipeline,
    findings,
    ...(opts.prune ? { prune_plan: plan } : {}),
    applied: { count: 0, backup_dir: null },
    safety: { usage_only_never_pruned: true, physical_delete: false, apply_requires_prune: true },
  };
}

const SPEC_HALF_LIFE_DAYS = 60;
const DAY_MS = 86_400_000;

/** 2^(−ageDays/60) for a spec entry's date; null when the date does not parse. */
function freshnessOf(date: string, now: Date): number | null {
  const t = Date.parse(date);
  if (!Number.isFinite(t)) return null;
  return Math.pow(2, -Math.max(0, now.getTime() - t) / DAY_MS / SPEC_HALF_LIFE_DAYS);
}

function applyPlan(root: WorkflowRoot, plan: PlanAction[], now: Date): AuditResult['applied'] {
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
    try {
      for (const p of plan) {
        if (p.store === 'spec') {
          const loc = locateSpecEntry(root, p.target_id);
          writeFileAtomic(loc.file, upsertTagAttributes(readFileSync(loc.file, 'utf8'), loc.ordinal, { status: 'deprecated', 'superseded-by': p.successor_id }));
        } else supersedeKnowhow(root, p.target_id, p.successor_id);
        n++;
      }
    } catch (err) {
      // Roll back from the backup: all or nothing.
      for (const f of files) writeFileAtomic(f, readFileSync(join(backupDir, relative(root.projectDir, f)), 'utf8'));
      throw err;
    }
    mkdirSync(dirname(log), { recursive: true });
    const at = new Date().toISOString();
    for (const p of plan) appendFileSync(log, `${JSON.stringify({ audit_id: auditId, action_id: p.id, store: p.store, target_id: p.target_id, action: p.action, reason: p.reason, applied_at: at, backup_path: relative(root.projectDir, backupDir) })}\n`);
    return { count: n, backup_dir: backupDir };
  });
}
