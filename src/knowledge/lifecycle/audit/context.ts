/**
 * What the steps of `maestro knowledge audit` (audit.ts) share: the result's shape, its findings and prune
 * plan, and the context every step reads and appends to (the project's corpus and its lookups).
 */
import { relative } from 'node:path';
import { knowhowSource, loadCorpus, specSource } from '../../format/corpus.js';
import type { KnowledgeEntry } from '../../format/entry.js';
import type { WorkflowRoot } from '../../format/root.js';
import { sha256 } from '../ledger/recipes.js';
import type { LifecycleContext } from '../context.js';

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

export const stableId = (prefix: string, ...parts: string[]) => `${prefix}-${sha256(parts.join('\0')).slice(0, 10)}`;
/** What every audit step reads and appends to: the corpus, its lookups, and the findings and plan so far. */
export interface AuditContext {
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

export type AuditOptions = { scope?: string; prune?: boolean; apply?: boolean; force?: boolean; now?: Date };

export function auditContext(lc: LifecycleContext, root: WorkflowRoot, scope: string, now: Date): AuditContext {
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
