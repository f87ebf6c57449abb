/**
 * Knowledge of the selected project: search with facets, an entry with its
 * evolution chain, the review queue (candidates with their receipts, matches
 * and evidence; reconcile, resolve with a reason, promote) and the audit
 * report with its prune plan. Everything from the daemon is rendered as text.
 */
import { useTranslation } from 'react-i18next';
import { useProjects } from '../stores/projects.js';
import { href } from '../stores/route.js';
import { Audit } from './knowledge/Audit.js';
import { Entry } from './knowledge/Entry.js';
import { Review } from './knowledge/Review.js';
import { Search } from './knowledge/Search.js';
import styles from './Screens.module.css';

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
          {view === 'review' && <Review projectId={projectId} sessionId={id} />}
          {view === 'audit' && <Audit projectId={projectId} />}
        </>
      )}
    </div>
  );
}
