/** Left column: projects and the screens. */
import { useTranslation } from 'react-i18next';
import { useProjects } from '../stores/projects.js';
import { href, useRoute, type Route } from '../stores/route.js';
import styles from './Sidebar.module.css';

const SCREENS: { route: Route; key: string }[] = [
  { route: { name: 'board' }, key: 'nav.board' },
  { route: { name: 'metrics' }, key: 'nav.metrics' },
  { route: { name: 'settings' }, key: 'nav.settings' },
  { route: { name: 'knowledge', view: 'search' }, key: 'nav.knowledge' },
  { route: { name: 'observer' }, key: 'nav.observer' },
];

export function Sidebar() {
  const { t } = useTranslation();
  const { projects, selectedId, select, error, loaded } = useProjects();
  const current = useRoute((s) => s.route.name);
  return (
    <nav className={styles.side} aria-label={t('nav.label')}>
      <h3 id="projects-h">{t('nav.projects')}</h3>
      {error && <p role="alert" className={styles.err}>{error}</p>}
      {loaded && !error && projects.length === 0 && <p className={styles.muted}>{t('nav.noProjects')}</p>}
      <ul aria-labelledby="projects-h" className={styles.list}>
        {projects.map((p) => (
          <li key={p.id}>
            <button aria-pressed={p.id === selectedId} className={p.id === selectedId ? styles.active : styles.item} onClick={() => select(p.id)} title={p.repoPath}>
              {p.name}
            </button>
          </li>
        ))}
      </ul>
      <h3>{t('nav.screens')}</h3>
      <ul className={styles.list}>
        {SCREENS.map((s) => (
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
