import { useTranslation } from 'react-i18next';
import type { Task } from '../../api/types.js';
import { href } from '../../stores/route.js';
import { parsedSubtasks, splitPlan, type ProposedSubtask } from './planText.js';
import { visible } from '../hiddenChars.js';
import styles from './Detail.module.css';

export function PlanSection({ task, children }: { task: Task; children: Task[] }) {
  const { t } = useTranslation();
  if (!task.plan && !task.spec && children.length === 0) return null;
  const split = task.plan ? splitPlan(task.plan) : { prose: '', subtasks: null };
  const prose = split.prose;
  const subtasks = parsedSubtasks(task.result) ?? split.subtasks;
  return (
    <section className={styles.section} aria-labelledby="plan-h">
      <h3 id="plan-h">{t('detail.plan')}</h3>
      {task.plan && <pre data-testid="plan-text">{visible(prose)}</pre>}
      {children.length > 0 ? <SubtaskTable children={children} /> : subtasks && <ProposedSubtasks subtasks={subtasks} />}
      {task.plan && subtasks && (
        <details>
          <summary>{t('detail.rawPlan')}</summary>
          <pre>{visible(task.plan)}</pre>
        </details>
      )}
      {task.spec && (
        <>
          <h3>{t('detail.spec')}</h3>
          <pre>{visible(task.spec)}</pre>
        </>
      )}
    </section>
  );
}

/** The subtasks the plan made, each linked, with its status and its deps by title. */
function SubtaskTable({ children }: { children: Task[] }) {
  const { t } = useTranslation();
  const titleOf = (id: string) => children.find((c) => c.id === id)?.title ?? id;
  return (
    <table aria-label={t('detail.subtasks')}>
      <thead>
        <tr>
          <th>{t('field.title')}</th>
          <th>{t('field.status')}</th>
          <th>{t('field.priority')}</th>
          <th>{t('field.complexity')}</th>
          <th>{t('field.deps')}</th>
          <th>{t('field.ownedFiles')}</th>
        </tr>
      </thead>
      <tbody>
        {children.map((c) => (
          <tr key={c.id}>
            <td>
              <a href={href({ name: 'board', taskId: c.id })}>{visible(c.title)}</a>
            </td>
            <td>{t(`status.${c.status}`)}</td>
            <td>P{c.priority}</td>
            <td>{t(`complexity.${c.complexity}`)}</td>
            <td>{c.deps.map(titleOf).join(', ') || '—'}</td>
            <td>{c.ownedFiles.join(', ') || '—'}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** The subtasks a plan proposes, before they are made: numbered, their deps by title (or number). */
function ProposedSubtasks({ subtasks }: { subtasks: ProposedSubtask[] }) {
  const { t } = useTranslation();
  return (
    <table aria-label={t('detail.proposed')}>
      <caption className={styles.muted}>{t('detail.proposed')}</caption>
      <thead>
        <tr>
          <th>#</th>
          <th>{t('field.title')}</th>
          <th>{t('field.priority')}</th>
          <th>{t('field.complexity')}</th>
          <th>{t('field.deps')}</th>
          <th>{t('field.ownedFiles')}</th>
        </tr>
      </thead>
      <tbody>
        {subtasks.map((s, i) => (
          <tr key={i}>
            <td>{i}</td>
            <td title={s.expectedOutput && visible(s.expectedOutput)}>{visible(s.title)}</td>
            <td>{s.priority ?? '—'}</td>
            <td>{s.complexity ? t(`complexity.${s.complexity}`, { defaultValue: s.complexity }) : '—'}</td>
            <td>{visible(s.deps.map((d) => subtasks[d]?.title ?? `#${d}`).join(', ')) || '—'}</td>
            <td>{visible(s.ownedFiles.join(', ')) || '—'}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
