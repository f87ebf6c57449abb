import type { ReactNode } from 'react';
import { useTranslation } from 'react-i18next';
import { LAST_ERROR_STATUSES, type Run, type Task } from '../../api/types.js';
import { translateReason } from '../reasons.js';
import styles from './Detail.module.css';

export function Fields({ task, runs }: { task: Task; runs: Run[] }) {
  const { t, i18n } = useTranslation();
  // The attempt a person counts: execute runs of this version (task.attempt counts claims, plans included).
  const executions = runs.filter((r) => r.kind === 'execute').length;
  const rows: [string, ReactNode][] = [
    ['field.status', t(`status.${task.status}`)],
    ['field.id', task.id],
    ['field.priority', `P${task.priority}`],
    ['field.complexity', t(`complexity.${task.complexity}`)],
    ['field.type', task.taskType ? t(`taskType.${task.taskType}`, { defaultValue: task.taskType }) : '—'],
    ['field.scope', task.scope ? t(`scope.${task.scope}`, { defaultValue: task.scope }) : '—'],
    ['field.version', String(task.version)],
    ['field.attempt', executions ? String(executions) : '—'],
    ['field.expected', task.expectedOutput ?? '—'],
    ['field.ownedFiles', task.ownedFiles.join(', ') || '—'],
    ['field.updated', new Date(task.updatedAt).toLocaleString(i18n.language)],
  ];
  // The last error explains a task that waits for a person or for its retry; once the task got past it (a gate, done) it is history.
  if (task.lastRunError && LAST_ERROR_STATUSES.includes(task.status)) rows.push(['field.lastError', translateReason(t, task.lastRunError)]);
  return (
    <section className={styles.section} aria-labelledby="fields-h">
      <h3 id="fields-h">{t('detail.fields')}</h3>
      <dl className={styles.fields}>
        {rows.map(([k, v]) => (
          <div key={k} style={{ display: 'contents' }}>
            <dt>{t(k)}</dt>
            <dd data-testid={k}>{v}</dd>
          </div>
        ))}
      </dl>
    </section>
  );
}
