/**
 * Knowledge: search with facets, an entry with its evolution chain, the review
 * queue (candidates with their matches and evidence; resolve, promote) and the
 * audit report. A daemon without the knowledge routes gets a clear notice.
 */
import { useEffect, useState, type FormEvent } from 'react';
import { useTranslation } from 'react-i18next';
import { knowledge, type AuditReport, type KnowledgeEntry, type KnowledgeSearch, type Maybe, type ReviewCandidate } from '../api/knowledge.js';
import { href } from '../stores/route.js';
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
    setError(null);
    load().then(setResult, (e: Error) => setError(e.message));
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [...deps, n]);
  return { result, error, reload: () => setN(n + 1) };
}

function Search() {
  const { t } = useTranslation();
  const [q, setQ] = useState('');
  const [type, setType] = useState('');
  const [category, setCategory] = useState('');
  const [res, setRes] = useState<Maybe<KnowledgeSearch> | null>(null);
  const [error, setError] = useState<string | null>(null);
  const run = async (e?: FormEvent, over: { type?: string; category?: string } = {}) => {
    e?.preventDefault();
    if (!q.trim()) return;
    setError(null);
    try {
      setRes(await knowledge.search({ q: q.trim(), type: over.type ?? type, category: over.category ?? category }));
    } catch (err) {
      setError((err as Error).message);
    }
  };
  const data = res?.available ? res.data : null;
  const categories = data ? [...new Set(data.results.map((r) => r.category).filter((c): c is string => !!c))] : [];
  return (
    <>
      <form className={styles.row} role="search" onSubmit={(e) => void run(e)}>
        <input type="search" aria-label={t('knowledge.query')} placeholder={t('knowledge.query')} value={q} onChange={(e) => setQ(e.target.value)} maxLength={500} />
        <button type="submit">{t('knowledge.search')}</button>
      </form>
      {error && <p role="alert" className={styles.error}>{error}</p>}
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
            {data.results.map((r) => (
              <div key={r.id} className={styles.card}>
                <a href={href({ name: 'knowledge', view: 'entry', id: r.id })}>{r.name}</a> <span className={styles.badge}>{r.kind}</span>
                {r.category && <span className={styles.badge}>{r.category}</span>}
                {r.selectionReason && r.selectionReason !== 'relevance' && <span className={styles.badge}>{r.selectionReason}</span>}
                {typeof r.score === 'number' && <span className={styles.muted}> {r.score.toFixed(2)}</span>}
                {(r.snippet ?? r.summary ?? r.detail) && <p className={styles.muted}>{r.snippet ?? r.summary ?? r.detail}</p>}
              </div>
            ))}
          </div>
        </div>
      )}
    </>
  );
}

function Entry({ id }: { id: string }) {
  const { t } = useTranslation();
  const { result, error } = useLoad(() => knowledge.entry(id), [id]);
  if (error) return <p role="alert" className={styles.error}>{error}</p>;
  if (!result) return <p>{t('app.loading')}</p>;
  if (!result.available) return <Unavailable />;
  const e: KnowledgeEntry = result.data.entry;
  return (
    <article className={styles.card}>
      <h2>{e.title ?? e.name ?? e.id}</h2>
      <p>
        <span className={styles.badge}>{e.type ?? '—'}</span>
        {e.category && <span className={styles.badge}>{e.category}</span>}
        {e.status && <span className={styles.badge}>{e.status}</span>}
        {e.date && <span className={styles.muted}>{e.date}</span>}
      </p>
      {e.keywords?.length ? <p className={styles.muted}>{e.keywords.join(', ')}</p> : null}
      <pre>{e.body ?? e.content ?? ''}</pre>
      <h3>{t('knowledge.chain')}</h3>
      <ol>
        {(e.chain ?? [{ id: e.id, title: e.title, status: e.status, date: e.date }]).map((c) => (
          <li key={c.id}>
            {c.id === e.id ? <strong>{c.title ?? c.id}</strong> : <a href={href({ name: 'knowledge', view: 'entry', id: c.id })}>{c.title ?? c.id}</a>} {c.status && <span className={styles.badge}>{c.status}</span>} {c.date}
          </li>
        ))}
      </ol>
    </article>
  );
}

function Review() {
  const { t } = useTranslation();
  const { result, error, reload } = useLoad(() => knowledge.reviewQueue(), []);
  const [note, setNote] = useState<string | null>(null);
  const act = async (c: ReviewCandidate, what: 'accept' | 'dismiss' | 'promote') => {
    try {
      if (what === 'promote') await knowledge.promote(c.id);
      else await knowledge.resolve(c.id, what);
      setNote(null);
      reload();
    } catch (err) {
      setNote((err as Error).message);
    }
  };
  if (error) return <p role="alert" className={styles.error}>{error}</p>;
  if (!result) return <p>{t('app.loading')}</p>;
  if (!result.available) return <Unavailable />;
  const list = result.data.candidates;
  return (
    <>
      {note && <p role="alert" className={styles.error}>{note}</p>}
      {list.length === 0 && <p className={styles.muted}>{t('knowledge.queueEmpty')}</p>}
      {list.map((c) => (
        <div key={c.id} className={styles.card}>
          <strong>{c.title}</strong> {c.category && <span className={styles.badge}>{c.category}</span>} {c.status && <span className={styles.badge}>{c.status}</span>}
          {c.summary && <p>{c.summary}</p>}
          {c.matches?.length ? (
            <>
              <h3>{t('knowledge.matches')}</h3>
              <ul>{c.matches.map((m) => <li key={m.id}><a href={href({ name: 'knowledge', view: 'entry', id: m.id })}>{m.name ?? m.id}</a> {m.relation} {typeof m.score === 'number' ? m.score.toFixed(2) : ''}</li>)}</ul>
            </>
          ) : null}
          {c.evidence?.length ? (
            <>
              <h3>{t('knowledge.evidence')}</h3>
              <ul>{c.evidence.map((ev) => <li key={ev}><code>{ev}</code></li>)}</ul>
            </>
          ) : null}
          <div className={styles.row}>
            <button onClick={() => void act(c, 'accept')}>{t('knowledge.accept')}</button>
            <button onClick={() => void act(c, 'dismiss')}>{t('knowledge.dismiss')}</button>
            <button onClick={() => void act(c, 'promote')}>{t('knowledge.promote')}</button>
          </div>
        </div>
      ))}
    </>
  );
}

function Audit() {
  const { t } = useTranslation();
  const { result, error } = useLoad(() => knowledge.audit(), []);
  if (error) return <p role="alert" className={styles.error}>{error}</p>;
  if (!result) return <p>{t('app.loading')}</p>;
  if (!result.available) return <Unavailable />;
  const r: AuditReport = result.data;
  return (
    <div className={styles.card}>
      {r.summary && <p>{Object.entries(r.summary).map(([k, v]) => `${k}: ${v}`).join(' · ')}</p>}
      {r.findings.length === 0 ? <p className={styles.muted}>{t('knowledge.auditClean')}</p> : (
        <table>
          <thead><tr><th>{t('knowledge.severity')}</th><th>{t('knowledge.where')}</th><th>{t('knowledge.message')}</th></tr></thead>
          <tbody>{r.findings.map((f, i) => <tr key={i}><td>{f.severity}</td><td>{f.file ? `${f.file}${f.line ? `:${f.line}` : ''}` : (f.id ?? '')}</td><td>{f.message}</td></tr>)}</tbody>
        </table>
      )}
    </div>
  );
}

export function KnowledgeScreen({ view, id }: { view: 'search' | 'review' | 'audit' | 'entry'; id?: string }) {
  const { t } = useTranslation();
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
      {view === 'search' && <Search />}
      {view === 'entry' && id && <Entry id={id} />}
      {view === 'review' && <Review />}
      {view === 'audit' && <Audit />}
    </div>
  );
}
