/** The search tab: a query with type and category facets over the wiki and the code graph. */
import { useState, type FormEvent } from 'react';
import { useTranslation } from 'react-i18next';
import { fitPlaceholder } from '../../components/fit.js';
import { knowledge, type Maybe, type SearchResponse } from '../../api/knowledge.js';
import { href } from '../../stores/route.js';
import styles from '../Screens.module.css';
import { Unavailable } from './common.js';

export function Search({ projectId }: { projectId: string }) {
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
