/**
 * The audit's checks of the project's specs and knowhow (FORMATS §4.6): frontmatter, stable ids,
 * supersession links and cycles, knowhow metadata and code references, stale specs, exact duplicates.
 * Each appends its findings (and prune plan actions) to the audit's context.
 */
import { readFileSync } from 'node:fs';
import { parseKnowhowText } from '../../format/knowhowParser.js';
import type { KnowledgeEntry } from '../../format/entry.js';
import { normA } from '../ledger/recipes.js';
import type { AuditContext } from './context.js';
import { ghostReference } from './ghostReference.js';

/** Bad frontmatter, missing sids, dangling or cyclic supersession links, and supersessions not yet applied. */
export function checkSupersession(ctx: AuditContext): void {
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
export function checkKnowhowFiles(ctx: AuditContext, deprecatedNow: Set<string>): Set<string> {
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
export function checkStaleSpecs(ctx: AuditContext, deprecatedNow: Set<string>): void {
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
export function checkDuplicates(ctx: AuditContext): void {
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

const SPEC_HALF_LIFE_DAYS = 60;
const DAY_MS = 86_400_000;

/** 2^(−ageDays/60) for a spec entry's date; null when the date does not parse. */
function freshnessOf(date: string, now: Date): number | null {
  const t = Date.parse(date);
  if (!Number.isFinite(t)) return null;
  return Math.pow(2, -Math.max(0, now.getTime() - t) / DAY_MS / SPEC_HALF_LIFE_DAYS);
}
