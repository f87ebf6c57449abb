/** Left column: projects and the screens. */
import { useTranslation } from 'react-i18next';
import type { Project } from '../api/types.js';
import { severalDaemons, useDaemons } from '../stores/daemons.js';
import { useProjects } from '../stores/projects.js';
import { href, useRoute, type Route } from '../stores/route.js';
import { visible } from './hiddenChars.js';
import styles from './Sidebar.module.css';

const SCREENS: { route: Route; key: string }[] = [
  { route: { name: 'board' }, key: 'nav.board' },
  { route: { name: 'metrics' }, key: 'nav.metrics' },
  { route: { name: 'settings' }, key: 'nav.settings' },
  { route: { name: 'knowledge', view: 'search' }, key: 'nav.knowledge' },
  { route: { name: 'observer' }, key: 'nav.observer' },
];

/** Listed once another daemon shares the database: a single machine's board stays as it was. */
const DAEMONS = { route: { name: 'daemons' } as Route, key: 'nav.daemons' };

function ProjectList({ labelledBy, projects, selectedId, select }: { labelledBy: string; projects: Project[]; selectedId: string | null; select: (id: string) => void }) {
  return (
    <ul aria-labelledby={labelledBy} className={styles.list}>
      {projects.map((p) => (
        <li key={p.id}>
          <button aria-pressed={p.id === selectedId} className={p.id === selectedId ? styles.active : styles.item} onClick={() => select(p.id)} title={p.repoPath}>
            {visible(p.name)}
          </button>
        </li>
      ))}
    </ul>
  );
}

export function Sidebar() {
  const { t } = useTranslation();
  const { projects, selectedId, select, error, loaded } = useProjects();
  const current = useRoute((s) => s.route.name);
  const daemons = useDaemons((s) => s.list);
  const screens = severalDaemons(daemons) || current === 'daemons' ? [...SCREENS, DAEMONS] : SCREENS;
  const active = projects.filter((p) => p.archivedAt === null);
  const archived = projects.filter((p) => p.archivedAt !== null);
  return (
    <nav className={styles.side} aria-label={t('nav.label')}>
      <h3 id="projects-h">{t('nav.projects')}</h3>
      {error && <p role="alert" className={styles.err}>{error}</p>}
      {loaded && !error && active.length === 0 && <p className={styles.muted}>{t('nav.noProjects')}</p>}
      <ProjectList labelledBy="projects-h" projects={active} selectedId={selectedId} select={select} />
      {archived.length > 0 && (
        // Open by itself while the selected project is one of them.
        <details open={archived.some((p) => p.id === selectedId) || undefined}>
          <summary className={styles.muted} id="archived-h">{t('nav.archived', { count: archived.length })}</summary>
          <ProjectList labelledBy="archived-h" projects={archived} selectedId={selectedId} select={select} />
        </details>
      )}
      <h3>{t('nav.screens')}</h3>
      <ul className={styles.list}>
        {screens.map((s) => (
          <li key={s.key}>
            <a href={href(s.route)} aria-current={current === s.route.name ? 'page' : undefined} className={current === s.route.name ? styles.activeLink : styles.link}>
              {t(s.key)}
            </a>
          </li>
        ))}
      </ul>
    </nav>
  );
}
