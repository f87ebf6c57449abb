/** Middle: the board; right: the open task's detail. */
import { useCallback, useMemo } from 'react';
import { useTranslation } from 'react-i18next';
import { Board } from '../components/Board.js';
import { TaskDetailPanel } from '../components/detail/TaskDetailPanel.js';
import { useProjects } from '../stores/projects.js';
import { navigate } from '../stores/route.js';
import { useTasks } from '../stores/tasks.js';
import styles from './Screens.module.css';

export function BoardScreen({ taskId, wide = false }: { taskId?: string; wide?: boolean }) {
  const { t } = useTranslation();
  const byId = useTasks((s) => s.byId);
  const error = useTasks((s) => s.error);
  const loading = useTasks((s) => s.loading);
  const selectedProject = useProjects((s) => s.selectedId);
  const archivedAt = useProjects((s) => s.projects.find((p) => p.id === s.selectedId)?.archivedAt ?? null);
  const tasks = useMemo(() => Object.values(byId), [byId]);
  // Stable, so the memoised cards do not all re-render when one task changes.
  const open = useCallback((id: string) => navigate({ name: 'board', taskId: id }), []);
  return (
    <>
      {!(wide && taskId) && (
        <div className={styles.middle}>
          {error && <p role="alert" className={styles.error}>{t('board.loadFailed', { message: error })}</p>}
          {archivedAt !== null && <p role="status" className={styles.pad}>{t('board.archived', { when: new Date(archivedAt).toLocaleString() })}</p>}
          {!selectedProject ? <p className={styles.pad}>{t('board.pickProject')}</p> : loading && tasks.length === 0 ? <p className={styles.pad}>{t('app.loading')}</p> : <Board tasks={tasks} selectedId={taskId} onOpen={open} />}
        </div>
      )}
      {taskId && (
        <aside className={wide ? styles.detailWide : styles.detail} aria-label={t('detail.label')} onKeyDown={(e) => {
            if (e.key !== 'Escape') return;
            navigate({ name: 'board' });
            requestAnimationFrame(() => document.querySelector<HTMLElement>(`[data-card="${CSS.escape(taskId)}"]`)?.focus());
          }}>
          <TaskDetailPanel key={taskId} taskId={taskId} wide={wide} />
        </aside>
      )}
    </>
  );
}
