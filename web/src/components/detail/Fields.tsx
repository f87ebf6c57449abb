import type { ReactNode } from 'react';
import { useTranslation } from 'react-i18next';
import type { TFunction } from 'i18next';
import { LAST_ERROR_STATUSES, type Run, type Task } from '../../api/types.js';
import { oneLine } from '../hiddenChars.js';
import { translateReason } from '../reasons.js';
import styles from './Detail.module.css';

/**
 * The feedback a version carries, said in the board's language from its data (feedbackSource): who rejected it at
 * which gate and why, with the line comments; or who ran it again from the base branch after it stopped (`baseBranch`,
 * the task detail's: the source records none, so a version made before the project's base branch changed names the current one). The server's English
 * text (`feedback`, what the agent reads) only for a version made before the data was kept.
 */
function Feedback({ t, task, baseBranch }: { t: TFunction; task: Task; baseBranch: string }): ReactNode {
  const source = task.feedbackSource;
  if (!source) return task.feedback;
  if (source.kind === 'fresh') {
    const named = { version: source.version, who: source.who, base: oneLine(baseBranch) };
    return source.error ? t('feedbackFrom.freshError', { ...named, error: translateReason(t, source.error) }) : t('feedbackFrom.fresh', named);
  }
  return (
    <>
      {t('feedbackFrom.rejected', { gate: t(`status.${source.gate}`), who: source.who, reason: source.reason })}
      {source.comments.length > 0 && (
        <>
          <br />
          {t('feedbackFrom.comments')}
          <ul className={styles.plainList}>
            {source.comments.map((c, i) => (
              <li key={i}>{t(c.side === 'old' ? 'feedbackFrom.commentOld' : 'feedbackFrom.comment', { file: c.file, line: c.line, text: c.text })}</li>
            ))}
          </ul>
        </>
      )}
    </>
  );
}

export function Fields({ task, runs, baseBranch }: { task: Task; runs: Run[]; baseBranch: string }) {
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
  if (task.feedbackSource || task.feedback) rows.push(['field.feedback', <Feedback t={t} task={task} baseBranch={baseBranch} />]);
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
