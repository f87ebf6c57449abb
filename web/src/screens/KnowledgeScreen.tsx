/**
 * Knowledge of the selected project: search with facets, an entry with its
 * evolution chain, the review queue (candidates with their receipts, matches
 * and evidence; reconcile, resolve with a reason, promote) and the audit
 * report with its prune plan. Everything from the daemon is rendered as text.
 */
import { useEffect, useState, type FormEvent } from 'react';
import { useTranslation } from 'react-i18next';
import { fitPlaceholder } from '../components/fit.js';
import { knowledge, RESOLVE_AS, type AuditResult, type CodeNode, type LoadedEntry, type Maybe, type ReviewCandidate, type ReviewQueueSession, type SearchResponse } from '../api/knowledge.js';
import { useProjects } from '../stores/projects.js';
import { href } from '../stores/route.js';
import { visible } from '../components/hiddenChars.js';
import styles from './Screens.module.css';

function Unavailable() {
  const { t } = useTranslation();
  return (
    <p className={styles.unavailable} role="status" data-testid="knowledge-unavailable">
      {t('knowledge.unavailable')}
    </p>
  );
}

function useLoad<T>(load: () => Promise<Maybe<T>>, deps: unknown[]): { result: Maybe<T> | null; error: string | null; reload(): void } {
  const [result, setResult] = useState<Maybe<T> | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [n, setN] = useState(0);
  useEffect(() => {
    let live = true;
    setError(null);
    load().then(
      (r) => live && setResult(r),
      (e: Error) => live && setError(e.message),
    );
    return () => {
      live = false;
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [...deps, n]);
  return { result, error, reload: () => setN((x) => x + 1) };
}

function Search({ projectId }: { projectId: string }) {
  const { t } = useTranslation();
  const [q, setQ] = useState('');
  const [type, setType] = useState('');
  const [category, setCategory] = useState('');
  const [res, setRes] = useState<Maybe<SearchResponse> | null>(null);
  const [error, setError] = useState<string | null>(null);
  const run = async (e?: FormEvent, over: { type?: string; category?: string } = {}) => {
    e?.preventDefault();
    if (!q.trim()) return;
    setError(null);
    try {
      setRes(await knowledge.search(projectId, { q: q.trim(), type: over.type ?? type, category: over.category ?? category }));
    } catch (err) {
      setError((err as Error).message);
    }
  };
  const data = res?.available ? res.data : null;
  // Code symbols on the mixed page have no category (FORMATS §5.3).
  const categories = data ? [...new Set(data.results.flatMap((r) => (r.source === 'wiki' && r.category ? [r.category] : [])))] : [];
  return (
    <>
      <form className={styles.row} role="search" onSubmit={(e) => void run(e)}>
        <input type="search" aria-label={t('knowledge.query')} placeholder={t('knowledge.query')} style={fitPlaceholder(t('knowledge.query'))} value={q} onChange={(e) => setQ(e.target.value)} maxLength={500} />
        <button type="submit">{t('knowledge.search')}</button>
      </form>
      {error && <p role="alert" className={styles.error}>{error}</p>}
      {!res && !error && <p className={styles.muted} data-testid="knowledge-search-hint">{t('knowledge.searchHint')}</p>}
      {res && !res.available && <Unavailable />}
      {data && (
        <div style={{ display: 'flex', gap: 16 }}>
          <aside style={{ width: 200 }} aria-label={t('knowledge.facets')}>
            <h3>{t('knowledge.type')}</h3>
            <ul style={{ listStyle: 'none', padding: 0 }}>
              {Object.entries(data.typeCounts).map(([k, n]) => (
                <li key={k}>
                  <label>
                    <input type="radio" name="ktype" checked={type === k} onChange={() => { setType(k); void run(undefined, { type: k }); }} /> {k} ({n})
                  </label>
                </li>
              ))}
              <li>
                <label>
                  <input type="radio" name="ktype" checked={type === ''} onChange={() => { setType(''); void run(undefined, { type: '' }); }} /> {t('knowledge.any')}
                </label>
              </li>
            </ul>
            {categories.length > 0 && (
              <>
                <h3>{t('knowledge.category')}</h3>
                <select aria-label={t('knowledge.category')} value={category} onChange={(e) => { setCategory(e.target.value); void run(undefined, { category: e.target.value }); }}>
                  <option value="">{t('knowledge.any')}</option>
                  {categories.map((c) => <option key={c} value={c}>{c}</option>)}
                </select>
              </>
            )}
          </aside>
          <div style={{ flex: 1 }}>
            <p className={styles.muted} role="status">{t('knowledge.counts', { count: data.count, wiki: data.wikiCount, code: data.codeCount })}</p>
            {data.results.length === 0 && <p className={styles.muted}>{data.noMatch ?? t('knowledge.noResults')}</p>}
            {data.results.length === 0 && <p className={styles.muted}>{t('knowledge.searchHint')}</p>}
            {data.results.map((r) => (
              <div key={r.id} className={styles.card}>
                <a href={href({ name: 'knowledge', view: 'entry', id: r.id })}>{r.name}</a> <span className={styles.badge}>{r.kind}</span>
                {r.source === 'wiki' && r.category && <span className={styles.badge}>{r.category}</span>}
                {r.selectionReason && r.selectionReason !== 'relevance' && <span className={styles.badge}>{r.selectionReason}</span>}
                {typeof r.score === 'number' && <span className={styles.muted}> {r.score.toFixed(2)}</span>}
                {r.source === 'wiki' ? (r.snippet || r.summary) && <p className={styles.muted}>{r.snippet || r.summary}</p> : <p className={styles.muted}>{r.detail}</p>}
              </div>
            ))}
          </div>
        </div>
      )}
    </>
  );
}

const entryLink = (id: string) => <a href={href({ name: 'knowledge', view: 'entry', id })}>{id}</a>;

function Entry({ projectId, id }: { projectId: string; id: string }) {
  const { t } = useTranslation();
  const { result, error } = useLoad(() => knowledge.entry(projectId, id), [projectId, id]);
  if (error) return <p role="alert" className={styles.error}>{error}</p>;
  if (!result) return <p>{t('app.loading')}</p>;
  if (!result.available) return <Unavailable />;
  // A code symbol's id (`code:…`, `file:…`) loads a code-graph node, not an entry.
  if (!('graphId' in result.data)) return <CodeNodeCard node={result.data} />;
  const e: LoadedEntry = result.data;
  const related = (e.neighbors ?? []).filter((n) => n.resolved && !['supersedes', 'superseded_by', 'superseded-by'].includes(n.rel));
  return (
    <article className={styles.card} data-testid="knowledge-entry">
      <h2>{e.title || e.id}</h2>
      <p>
        <span className={styles.badge}>{e.type}</span>
        {e.category && <span className={styles.badge}>{e.category}</span>}
        <span className={styles.badge}>{e.status}</span>
        {e.sid && <span className={styles.badge}>{e.sid}</span>}
        {e.date && <span className={styles.muted}>{e.date}</span>}
      </p>
      {e.tags.length ? <p className={styles.muted}>{e.tags.join(', ')}</p> : null}
      <pre style={{ whiteSpace: 'pre-wrap', overflowWrap: 'anywhere' }}>{e.body}</pre>
      <h3>{t('knowledge.chain')}</h3>
      <ol aria-label={t('knowledge.chain')}>
        {e.supersedes.map((s) => (
          <li key={`s-${s}`}>{t('knowledge.supersedes')}: {entryLink(s)}</li>
        ))}
        <li>
          <strong>{e.id}</strong> ({t('knowledge.current')})
        </li>
        {e.supersededBy && <li>{t('knowledge.supersededBy')}: {entryLink(e.supersededBy)}</li>}
      </ol>
      {related.length > 0 && (
        <>
          <h3>{t('knowledge.related')}</h3>
          <ul>{related.map((n) => <li key={`${n.rel}-${n.direction}-${n.id}`}>{n.rel}: {entryLink(n.id)}</li>)}</ul>
        </>
      )}
    </article>
  );
}

function CodeNodeCard({ node }: { node: CodeNode }) {
  return (
    <article className={styles.card} data-testid="knowledge-entry">
      <h2>{node.name}</h2>
      <p>
        <span className={styles.badge}>{node.kind}</span> <span className={styles.muted}>{node.line ? `${node.filePath}:${node.line}` : node.filePath}</span>
      </p>
      {node.signature && <pre style={{ whiteSpace: 'pre-wrap', overflowWrap: 'anywhere' }}>{node.signature}</pre>}
      {node.symbols?.length ? <ul>{node.symbols.map((sym) => <li key={sym.id}>{sym.kind} {entryLink(sym.id)}</li>)}</ul> : null}
    </article>
  );
}

function CandidateCard({ projectId, sessionId, c, onChanged }: { projectId: string; sessionId: string; c: ReviewCandidate; onChanged(note: string): void }) {
  const { t } = useTranslation();
  const [as, setAs] = useState<(typeof RESOLVE_AS)[number]>('unique');
  const [target, setTarget] = useState(c.canonical_id ?? c.matches[0]?.knowledge_id ?? '');
  const [reason, setReason] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const open = c.status === 'pending' || c.status === 'draft';
  const canPromote = c.status === 'pending' && c.receipt === 'fresh' && c.promotion_eligibility === 'eligible';
  const resolve = async (e: FormEvent) => {
    e.preventDefault();
    if (!reason.trim()) return setError(t('knowledge.needReason'));
    if (as !== 'unique' && !target.trim()) return setError(t('knowledge.needTarget'));
    setBusy(true);
    setError(null);
    try {
      const r = await knowledge.resolve(projectId, sessionId, { candidate: c.candidate_id, as, reason: reason.trim(), ...(as !== 'unique' ? { target: target.trim() } : {}) });
      onChanged(t('knowledge.resolvedAs', { reason: `${r.resolution.candidate_id} → ${t(`knowledge.dispositionName.${r.resolution.disposition}` as 'knowledge.dispositionName.unique')}` }));
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };
  const promote = async () => {
    setBusy(true);
    setError(null);
    try {
      const r = await knowledge.promote(projectId, sessionId, { candidates: [c.candidate_id] });
      const ids = [...r.promoted.map((p) => p.promoted_id), ...r.already_promoted.map((p) => p.promoted_id ?? p.candidate_id)];
      const why = [...r.skipped_review_required, ...r.skipped_suppressed, ...r.skipped_blocked.map((b) => `${b.candidate_id}: ${b.reason}`)];
      onChanged(ids.length ? t('knowledge.promoted', { ids: ids.join(', ') }) : t('knowledge.notPromoted', { why: why.join('; ') }));
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };
  const idBase = `cand-${sessionId}-${c.candidate_id}-${c.source_run}`;
  return (
    <section className={styles.card} aria-label={visible(c.title)} data-candidate={c.candidate_id}>
      <strong>{visible(c.title)}</strong> <code className={styles.muted}>{c.candidate_id}</code>
      <p className={styles.muted}>{t('knowledge.candidateFrom', { run: c.source_run, kind: c.source_kind, category: c.category ? ` · ${c.category}` : '' })}</p>
      {/* The title is the agent's label; this is what a promote writes, whole, with invisible characters shown. */}
      <pre data-testid="candidate-content" aria-label={t('knowledge.promotesText')} style={{ whiteSpace: 'pre-wrap', overflowWrap: 'anywhere' }}>{visible(c.content)}</pre>
      <p>
        <span className={styles.badge}>{c.target}</span>
        <span className={styles.badge}>{t(`knowledge.statusName.${c.status}` as 'knowledge.statusName.draft', { defaultValue: c.status })}</span>
        <span className={styles.badge}>
          {t('knowledge.receipt')}: {t(`knowledge.receiptState.${c.receipt}`)}
        </span>
        {c.disposition && (
          <span className={styles.badge}>
            {t('knowledge.disposition')}: {t(`knowledge.dispositionName.${c.disposition}`)}
          </span>
        )}
        {c.promotion_eligibility && (
          <span className={styles.badge}>
            {t('knowledge.eligibility')}: {t(`knowledge.eligibilityName.${c.promotion_eligibility}`)}
          </span>
        )}
      </p>
      {c.resolution && <p className={styles.muted}>{t('knowledge.resolvedAs', { reason: c.resolution.reason })}</p>}
      <h4>{t('knowledge.matches')}</h4>
      {c.matches.length === 0 ? (
        <p className={styles.muted}>{t('knowledge.noMatches')}</p>
      ) : (
        <ul>
          {c.matches.map((m) => (
            <li key={`${m.knowledge_id}-${m.relation}`}>
              {entryLink(m.knowledge_id)} {visible(m.title)} <span className={styles.badge}>{t(`knowledge.dispositionName.${m.relation}`)}</span> <span className={styles.muted}>{m.scores.composite.toFixed(2)}</span>
              {m.evidence.length > 0 && (
                <ul aria-label={t('knowledge.evidence')}>
                  {m.evidence.map((ev) => <li key={ev}><code>{ev}</code></li>)}
                </ul>
              )}
            </li>
          ))}
        </ul>
      )}
      {open && (
        <form className={styles.row} onSubmit={(e) => void resolve(e)}>
          <label htmlFor={`${idBase}-as`}>{t('knowledge.resolveAs')}</label>
          <select id={`${idBase}-as`} value={as} onChange={(e) => setAs(e.target.value as typeof as)}>
            {RESOLVE_AS.map((a) => <option key={a} value={a}>{t(`knowledge.as.${a}`)}</option>)}
          </select>
          {as !== 'unique' && (
            <>
              <label htmlFor={`${idBase}-target`}>{t('knowledge.target')}</label>
              <input id={`${idBase}-target`} list={`${idBase}-targets`} value={target} onChange={(e) => setTarget(e.target.value)} maxLength={300} />
              <datalist id={`${idBase}-targets`}>{c.matches.map((m) => <option key={m.knowledge_id} value={m.knowledge_id}>{visible(m.title)}</option>)}</datalist>
            </>
          )}
          <label htmlFor={`${idBase}-reason`}>{t('knowledge.reason')}</label>
          <input id={`${idBase}-reason`} value={reason} onChange={(e) => setReason(e.target.value)} maxLength={2000} />
          <button type="submit" disabled={busy || c.receipt !== 'fresh'}>{t('knowledge.resolve')}</button>
          <button type="button" disabled={busy || !canPromote} onClick={() => void promote()}>{t('knowledge.promote')}</button>
        </form>
      )}
      {error && <p role="alert" className={styles.error}>{error}</p>}
    </section>
  );
}

function SessionReview({ projectId, s, onChanged }: { projectId: string; s: ReviewQueueSession; onChanged(note: string): void }) {
  const { t } = useTranslation();
  const [error, setError] = useState<string | null>(null);
  const r = s.review;
  const stale = !!r && (r.sources.some((x) => x.receipt !== 'fresh') || r.candidates.some((c) => c.receipt !== 'fresh'));
  const reconcile = async () => {
    setError(null);
    try {
      await knowledge.reconcile(projectId, s.session_id);
      onChanged(t('knowledge.done'));
    } catch (err) {
      setError((err as Error).message);
    }
  };
  return (
    <section aria-label={t('knowledge.session', { id: s.session_id })} className={styles.card}>
      <h3>
        {t('knowledge.session', { id: s.session_id })} <span className={styles.badge}>{s.status}</span>
      </h3>
      {s.objective && <p className={styles.muted}>{s.objective}</p>}
      {s.error && <p role="alert" className={styles.error}>{t('knowledge.sessionError', { message: s.error.message })}</p>}
      {r && (
        <>
          <p className={styles.muted}>{t('knowledge.candidates', { count: r.candidates.length })}</p>
          {stale && (
            <p className={styles.row}>
              <span className={styles.muted}>{t('knowledge.reconcileHint')}</span>
              <button onClick={() => void reconcile()}>{t('knowledge.reconcile')}</button>
            </p>
          )}
          {error && <p role="alert" className={styles.error}>{error}</p>}
          {r.candidates.map((c) => <CandidateCard key={`${c.candidate_id}-${c.source_run}`} projectId={projectId} sessionId={s.session_id} c={c} onChanged={onChanged} />)}
          {r.inputs.length > 0 && (
            <>
              <h4>{t('knowledge.inputs')}</h4>
              <ul>
                {r.inputs.map((i) => (
                  <li key={`${i.run_id}-${i.knowledge_id}-${i.signal}-${i.source}`}>
                    {entryLink(i.knowledge_id)} <span className={styles.badge}>{i.signal}</span> ×{i.count} {i.evidence.map((ev) => <code key={ev}> {ev}</code>)}
                  </li>
                ))}
              </ul>
            </>
          )}
        </>
      )}
    </section>
  );
}

function Review({ projectId }: { projectId: string }) {
  const { t } = useTranslation();
  const { result, error, reload } = useLoad(() => knowledge.reviewQueue(projectId), [projectId]);
  const [note, setNote] = useState<string | null>(null);
  if (error) return <p role="alert" className={styles.error}>{error}</p>;
  if (!result) return <p>{t('app.loading')}</p>;
  if (!result.available) return <Unavailable />;
  const sessions = result.data.sessions.filter((s) => s.error || (s.review?.candidates.length ?? 0) > 0);
  const changed = (msg: string) => {
    setNote(msg);
    reload();
  };
  return (
    <>
      {note && <p role="status" data-testid="review-note">{note}</p>}
      {sessions.length === 0 && <p className={styles.muted} data-testid="review-empty">{t('knowledge.queueEmpty')}</p>}
      {sessions.map((s) => <SessionReview key={s.session_id} projectId={projectId} s={s} onChanged={changed} />)}
    </>
  );
}

function Audit({ projectId }: { projectId: string }) {
  const { t } = useTranslation();
  const [prune, setPrune] = useState(false);
  const { result, error } = useLoad(() => knowledge.audit(projectId, prune), [projectId, prune]);
  if (error) return <p role="alert" className={styles.error}>{error}</p>;
  if (!result) return <p>{t('app.loading')}</p>;
  if (!result.available) return <Unavailable />;
  const r: AuditResult = result.data;
  return (
    <div className={styles.card} data-testid="audit-report">
      <p>
        {t('knowledge.auditSummary', {
          specActive: r.spec_health.active,
          specTotal: r.spec_health.total,
          khActive: r.knowhow.active,
          khTotal: r.knowhow.total,
          sessions: r.pipeline.sessions,
          pending: r.pipeline.pending_observed + r.pipeline.pending_corroborated,
          promoted: r.pipeline.promoted,
        })}
      </p>
      <p className={styles.muted}>{t('knowledge.generated', { at: new Date(r.generated_at).toLocaleString() })}</p>
      {r.spec_health.total === 0 && r.knowhow.total === 0 && <p className={styles.muted} data-testid="audit-empty">{t('knowledge.auditEmpty')}</p>}
      {r.findings.length === 0 ? (
        <p className={styles.muted}>{t('knowledge.auditClean')}</p>
      ) : (
        <table aria-label={t('knowledge.tab.audit')}>
          <thead>
            <tr><th>{t('knowledge.severity')}</th><th>{t('knowledge.store')}</th><th>{t('knowledge.where')}</th><th>{t('knowledge.message')}</th><th>{t('knowledge.action')}</th></tr>
          </thead>
          <tbody>
            {r.findings.map((f) => (
              <tr key={f.id}>
                <td>{f.priority}</td>
                <td>{f.store}</td>
                <td><code>{f.target}</code></td>
                <td>{f.subtype}: {f.evidence}</td>
                <td>{t(`knowledge.actionName.${f.recommended_action}`)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <label className={styles.row}>
        <input type="checkbox" checked={prune} onChange={(e) => setPrune(e.target.checked)} /> {t('knowledge.showPlan')}
      </label>
      {prune && r.prune_plan && (
        <>
          <h3>{t('knowledge.prunePlan')}</h3>
          {r.prune_plan.length === 0 ? <p className={styles.muted}>{t('knowledge.planEmpty')}</p> : (
            <ul>{r.prune_plan.map((p) => <li key={p.id}>{p.action} <code>{p.target_id}</code> → <code>{p.successor_id}</code> ({p.reason})</li>)}</ul>
          )}
          <p className={styles.muted}>{t('knowledge.planHint')}</p>
        </>
      )}
    </div>
  );
}

export function KnowledgeScreen({ view, id }: { view: 'search' | 'review' | 'audit' | 'entry'; id?: string }) {
  const { t } = useTranslation();
  const projectId = useProjects((s) => s.selectedId);
  return (
    <div className={styles.page}>
      <h2>{t('knowledge.title')}</h2>
      <nav className={styles.row} aria-label={t('knowledge.title')}>
        {(['search', 'review', 'audit'] as const).map((v) => (
          <a key={v} href={href({ name: 'knowledge', view: v })} aria-current={view === v ? 'page' : undefined} className={styles.badge}>
            {t(`knowledge.tab.${v}`)}
          </a>
        ))}
      </nav>
      {!projectId ? (
        <p className={styles.muted}>{t('knowledge.pickProject')}</p>
      ) : (
        <>
          {view === 'search' && <Search key={projectId} projectId={projectId} />}
          {view === 'entry' && id && <Entry projectId={projectId} id={id} />}
          {view === 'review' && <Review projectId={projectId} />}
          {view === 'audit' && <Audit projectId={projectId} />}
        </>
      )}
    </div>
  );
}
