import { useTranslation } from 'react-i18next';
import type { Task } from '../../api/types.js';
import { href } from '../../stores/route.js';
import { parsedSubtasks, splitPlan, type ProposedSubtask } from './planText.js';
import { oneLine, visible } from '../hiddenChars.js';
import styles from './Detail.module.css';

export function PlanSection({ task, children }: { task: Task; children: Task[] }) {
  const { t } = useTranslation();
  // The specification is said above, with what was asked (TaskBrief).
  if (!task.plan && children.length === 0) return null;
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
    </section>
  );
}

/** The columns both tables have after their first ones. */
const SHARED = ['priority', 'complexity', 'deps', 'ownedFiles'];

function Head({ fields }: { fields: string[] }) {
  const { t } = useTranslation();
  return (
    <thead>
      <tr>
        {fields.map((f) => (
          <th key={f}>{f === '#' ? '#' : t(`field.${f}`)}</th>
        ))}
      </tr>
    </thead>
  );
}

/** File names an agent chose, each on one line (a line break in one is shown, as the CLI shows it). */
const files = (names: string[]) => names.map(oneLine).join(', ') || '—';

/** The subtasks the plan made, each linked, with its status and its deps by title. */
function SubtaskTable({ children }: { children: Task[] }) {
  const { t } = useTranslation();
  const titleOf = (id: string) => children.find((c) => c.id === id)?.title ?? id;
  return (
    <table aria-label={t('detail.subtasks')}>
      <Head fields={['title', 'status', ...SHARED]} />
      <tbody>
        {children.map((c) => (
          <tr key={c.id}>
            <td>
              <a href={href({ name: 'board', taskId: c.id })}>{visible(c.title)}</a>
            </td>
            <td>{t(`status.${c.status}`)}</td>
            <td>P{c.priority}</td>
            <td>{t(`complexity.${c.complexity}`)}</td>
            <td>{visible(c.deps.map(titleOf).join(', ')) || '—'}</td>
            <td>{files(c.ownedFiles)}</td>
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
      <Head fields={['#', 'title', ...SHARED]} />
      <tbody>
        {subtasks.map((s, i) => (
          <tr key={i}>
            <td>{i}</td>
            <td title={s.expectedOutput && visible(s.expectedOutput)}>{visible(s.title)}</td>
            <td>{s.priority ?? '—'}</td>
            <td>{s.complexity ? t(`complexity.${s.complexity}`, { defaultValue: s.complexity }) : '—'}</td>
            <td>{visible(s.deps.map((d) => subtasks[d]?.title ?? `#${d}`).join(', ')) || '—'}</td>
            <td>{files(s.ownedFiles)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
