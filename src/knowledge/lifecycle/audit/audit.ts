/**
 * `maestro knowledge audit` (FORMATS §4.6, seed 000 §9): read-only findings
 * over specs, knowhow, ledgers and usage; `--prune` adds a deterministic
 * soft-prune plan; `--apply` backs every touched file up under
 * `.workflow/.trash/knowledge-audit-<stamp>/` and then deprecates or
 * supersedes. Nothing is deleted, and usage alone never prunes. Unlike the
 * notes, an entry that a fresh pending candidate targets is not deprecated
 * without `--force` (the race seed 000 §9 leaves open).
 */
import { MaestroError } from '../../../core/errors.js';
import { effectiveDeprecated } from '../../format/corpus.js';
import type { LifecycleContext } from '../context.js';
import type { WorkflowRoot } from '../../format/root.js';
import { applyPlan } from './apply.js';
import { checkDuplicates, checkKnowhowFiles, checkStaleSpecs, checkSupersession } from './checks.js';
import { auditContext, type AuditContext, type AuditOptions, type AuditResult } from './context.js';
import { auditPipeline, type PipelineCounts } from './pipeline.js';

export type { AuditResult, Finding, PlanAction } from './context.js';

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
