/** An entry with its evolution chain and related entries, or the code-graph node a code symbol's id names. */
import { useTranslation } from 'react-i18next';
import { knowledge, type CodeNode, type LoadedEntry } from '../../api/knowledge.js';
import styles from '../Screens.module.css';
import { entryLink, Unavailable, useLoad } from './common.js';

export function Entry({ projectId, id }: { projectId: string; id: string }) {
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
